import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `courier` writes: the response body to standard output, everything else to standard error, each told
/// whether it is a terminal (which decides colour, pretty-printing, escaping and the progress bar).
///
/// Writes go through ``DescriptorWriter``s, off Swift's cooperative pool. A failed write to standard output ends
/// the transfer: ``write(_:)`` and ``flush()`` throw a ``CommandFailure`` (without a message for a closed pipe, as
/// curl and HTTPie say nothing when `head` stops reading). Standard error's failures are ignored: there is nowhere
/// left to report them.
struct Console: Sendable {
    /// Whether standard output is a terminal.
    var stdoutIsTerminal: Bool
    /// Whether standard error is a terminal.
    var stderrIsTerminal: Bool
    /// Colour is allowed at all: `NO_COLOR` is unset and `TERM` is not `dumb` (https://no-color.org).
    var colorAllowed: Bool
    /// The progress bar is drawn even when standard error is not a terminal (`--force-progress` or
    /// `COURIER_FORCE_PROGRESS=1`), for tests.
    var forceProgress: Bool
    private let writeOut: @Sendable (Data) async throws -> Void
    private let queueOut: @Sendable (Data) -> Void
    private let flushOut: @Sendable () async throws -> Void
    private let writeErr: @Sendable (Data) -> Void

    /// The process's own standard output and error.
    static func standard(environment: [String: String], forceProgress: Bool) -> Console {
        let out = DescriptorWriter.standardOutput
        let err = DescriptorWriter.standardError
        return Console(
            stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stderrIsTerminal: isatty(STDERR_FILENO) == 1,
            colorAllowed: environment["NO_COLOR"] == nil && environment["TERM"] != "dumb",
            forceProgress: forceProgress || ["1", "true", "yes"].contains(environment["COURIER_FORCE_PROGRESS"] ?? ""),
            writeOut: { try await out.write($0) }, queueOut: { out.enqueue($0) }, flushOut: { try await out.drain() },
            writeErr: { err.enqueue($0) })
    }

    /// A console writing to closures, for tests; a `writeOut` that throws fails the transfer as a failed write to
    /// standard output does.
    init(
        stdoutIsTerminal: Bool, stderrIsTerminal: Bool, colorAllowed: Bool, forceProgress: Bool,
        writeOut: @escaping @Sendable (Data) throws -> Void, writeErr: @escaping @Sendable (Data) -> Void
    ) {
        // Errors of the queued writes are kept for the next write or flush, as the real writer does.
        let failure = LockedValue<(any Error)?>(nil)
        self.init(
            stdoutIsTerminal: stdoutIsTerminal, stderrIsTerminal: stderrIsTerminal, colorAllowed: colorAllowed,
            forceProgress: forceProgress,
            writeOut: { data in
                if let error = failure.withLock({ $0 }) { throw error }
                try writeOut(data)
            },
            queueOut: { data in
                do { try writeOut(data) } catch { failure.withLock { if $0 == nil { $0 = error } } }
            },
            flushOut: { if let error = failure.withLock({ $0 }) { throw error } }, writeErr: writeErr)
    }

    private init(
        stdoutIsTerminal: Bool, stderrIsTerminal: Bool, colorAllowed: Bool, forceProgress: Bool,
        writeOut: @escaping @Sendable (Data) async throws -> Void, queueOut: @escaping @Sendable (Data) -> Void,
        flushOut: @escaping @Sendable () async throws -> Void, writeErr: @escaping @Sendable (Data) -> Void
    ) {
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.colorAllowed = colorAllowed
        self.forceProgress = forceProgress
        self.writeOut = writeOut
        self.queueOut = queueOut
        self.flushOut = flushOut
        self.writeErr = writeErr
    }

    /// Writes bytes to standard output, waiting whenever the writer's buffer is full (see ``DescriptorWriter``): for
    /// bodies, so they are read from the network no faster than they can be written.
    ///
    /// - Throws: ``CommandFailure`` when this write, or an earlier one still in the buffer, fails.
    func write(_ data: Data) async throws {
        do {
            try await writeOut(data)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Waits for the writes queued by ``out(_:)-(Data)``.
    ///
    /// - Throws: ``CommandFailure`` when one of them failed.
    func flush() async throws {
        do {
            try await flushOut()
        } catch {
            throw Self.failure(error)
        }
    }

    /// Queues bytes for standard output; a failure is thrown by the next ``write(_:)`` or ``flush()``.
    func out(_ data: Data) { queueOut(data) }

    /// Queues text for standard output.
    func out(_ text: String) { queueOut(Data(text.utf8)) }

    /// Writes text to standard error.
    func err(_ text: String) { writeErr(Data(text.utf8)) }

    /// Whether a progress bar is drawn.
    var showsProgress: Bool { stderrIsTerminal || forceProgress }

    /// The failure a failed write to standard output ends the run with.
    static func failure(_ error: any Error) -> CommandFailure {
        if let failure = error as? CommandFailure { return failure }
        if let write = error as? WriteError {
            // The reader is gone: stop quietly, with a failing status, as curl (23) and HTTPie do.
            if write.isBrokenPipe { return CommandFailure(.failure, "") }
            return CommandFailure(.failure, "cannot write to standard output: \(write)")
        }
        return CommandFailure(.failure, "cannot write to standard output: \(error)")
    }
}
