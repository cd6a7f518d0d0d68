import Foundation

/// Blocking work (a child process, a pipe read, a polling loop) done on a thread of its own, never on one of the
/// cooperative pool's.
///
/// On Linux the pool's threads are those of Dispatch's global queue, as wide as the machine has cores (two in CI), and
/// a blocked thread is replaced late if at all: six `DispatchQueue.global()` blocks of 3 s delay a new task by 2.9 s
/// (measured). A test blocking there holds back every other test's tasks: their bodies stop being read while their
/// timeouts, on a queue of Courier's own, keep counting. So blocking work gets a `Thread`, not `DispatchQueue.global()`.
enum OffPool {
    /// `body`'s result, `body` having run on a new thread.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` on a new thread, without waiting for it.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        Thread.detachNewThread(body)
    }
}
