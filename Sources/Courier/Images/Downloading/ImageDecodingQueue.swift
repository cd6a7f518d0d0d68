import Dispatch

/// Runs decoding work on dispatch threads, at most `width` jobs at a time, in the order they were submitted: the
/// event loops and the threads of Swift concurrency never decode, and a burst of images cannot take every core.
final class ImageDecodingQueue: Sendable {
    private struct State {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
    }

    /// How many jobs run at once.
    let width: Int
    private let queue = DispatchQueue(label: "Courier.ImageDecodingQueue", attributes: .concurrent)
    private let state = Locked(State())

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `work` when a place is free and returns its result.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        let startsNow = state.withLock { state -> Bool in
            guard state.running < width else {
                state.waiting.append(job)
                return false
            }
            state.running += 1
            return true
        }
        if startsNow { start(job) }
    }

    private func start(_ job: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            job()
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                guard !state.waiting.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            if let next { start(next) }
        }
    }
}
