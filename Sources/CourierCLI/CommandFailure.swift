/// A failure `courier` reports with a message and exits with.
struct CommandFailure: Error, Sendable, CustomStringConvertible {
    /// The status to exit with.
    var status: ExitStatus
    /// What went wrong, naming the cause.
    var message: String

    /// Creates a failure.
    init(_ status: ExitStatus = .failure, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The message.
    var description: String { message }
}
