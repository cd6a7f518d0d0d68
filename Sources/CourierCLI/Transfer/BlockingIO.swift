import Dispatch

/// Runs blocking file-system calls (`open`, `stat`, reading a file named in an item) on a dispatch queue of their
/// own, so they never hold one of the few threads of Swift's cooperative pool.
enum BlockingIO {
    private static let queue = DispatchQueue(label: "courier.blocking-io")

    /// The result of `body`, run on the queue.
    static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
