import NIOPosix

/// Runs blocking file system calls on NIO's blocking-I/O thread pool, never on Swift's cooperative pool.
///
/// The cooperative pool has one thread per core (two on the machines Courier is measured on): a `write(2)` to a slow
/// disk or a `read(2)` of a large upload there stalls every other task of the process. Callers await each call, so
/// the calls of one file still happen one after another, in order.
enum BlockingIO {
    /// `body`'s result, computed on the thread pool.
    static func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await NIOThreadPool.singleton.runIfActive(body)
    }

    /// ``run(_:)`` for a step that must not be skipped half-way: `body` runs, and its result is returned, even when
    /// the calling task is cancelled meanwhile (``run(_:)`` then skips work not yet begun and throws
    /// `CancellationError`). For opening a download's file and moving a finished one into place, whose outcome the
    /// task must know to clean up after it.
    static func runToCompletion<Result: Sendable>(
        _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        // An unstructured task does not inherit the caller's cancellation.
        try await Task { try await run(body) }.value
    }
}
