import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hands a streamed response from a task's runner to one consumer, with backpressure: the runner may be at most
/// one chunk ahead of the consumer, so it stops reading the socket while the consumer is busy.
///
/// Every waiter is resumed exactly once: by the other side, by ``finish(_:)``, or by its own cancellation.
final class ChunkHandoff: Sendable {
    private struct State {
        var head: HTTPURLResponse?
        var headWaiters: [CheckedContinuation<HTTPURLResponse, any Error>] = []
        var slot: Data?
        /// Waits for the slot to empty; resumed with `false` (the chunk is still to be put in).
        var producer: CheckedContinuation<Bool, any Error>?
        var consumer: CheckedContinuation<Data?, any Error>?
        /// Set once: `.success` at the end of the body, `.failure` when the task failed.
        var end: Result<Void, any Error>?
    }

    private let state = Locked(State())

    /// What ``head()`` throws when the task ended without an error but before a head was delivered.
    private static let endedBeforeHead = CourierError.badServerResponse(
        reason: "the response ended before its head arrived", underlyingError: nil, context: CourierError.Context())

    /// Whether a chunk waits for the consumer to take it: the consumer is behind, so the task is waiting on it,
    /// not on the server, whatever its runner is doing meanwhile.
    var holdsUntakenChunk: Bool { state.withLock { $0.slot != nil } }

    // MARK: Producer (the task's runner)

    /// Publishes the final response head to ``head()``'s callers.
    func deliver(head: HTTPURLResponse) {
        let waiters = state.withLock { state -> [CheckedContinuation<HTTPURLResponse, any Error>] in
            state.head = head
            defer { state.headWaiters = [] }
            return state.headWaiters
        }
        waiters.forEach { $0.resume(returning: head) }
    }

    /// Passes `chunk` on, waiting first while the previous chunk has not been taken.
    ///
    /// - Throws: `CancellationError` when the runner is cancelled while it waits, or when the stream has ended.
    func send(_ chunk: Data) async throws {
        let deposited = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                enum Action {
                    case deposited(CheckedContinuation<Data?, any Error>?)
                    case wait
                    case ended
                }
                let action = state.withLock { state -> Action in
                    if state.end != nil { return .ended }
                    if Task.isCancelled { return .ended }
                    if state.slot == nil {
                        if let consumer = state.consumer {
                            state.consumer = nil
                            return .deposited(consumer)
                        }
                        state.slot = chunk
                        return .deposited(nil)
                    }
                    state.producer = continuation
                    return .wait
                }
                switch action {
                case .deposited(let consumer):
                    consumer?.resume(returning: chunk)
                    continuation.resume(returning: true)
                case .ended:
                    continuation.resume(throwing: CancellationError())
                case .wait:
                    break
                }
            }
        } onCancel: {
            let producer = state.withLock { state -> CheckedContinuation<Bool, any Error>? in
                defer { state.producer = nil }
                return state.producer
            }
            producer?.resume(throwing: CancellationError())
        }
        if deposited { return }
        // The wait was for the slot to empty; the chunk still has to go in.
        let consumer = try state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { throw CancellationError() }
            if let consumer = state.consumer {
                state.consumer = nil
                return consumer
            }
            if state.slot == nil {
                state.slot = chunk
            }
            return nil
        }
        consumer?.resume(returning: chunk)
    }

    /// Ends the stream: consumers see the end of the body after the last chunk, or `error`.
    func finish(_ error: (any Error)?) {
        let (headWaiters, producer, consumer) = state.withLock { state in
            if state.end == nil { state.end = error.map { .failure($0) } ?? .success(()) }
            defer {
                state.headWaiters = []
                state.producer = nil
                state.consumer = nil
            }
            return (state.headWaiters, state.producer, state.consumer)
        }
        headWaiters.forEach { $0.resume(throwing: error ?? Self.endedBeforeHead) }
        producer?.resume(throwing: CancellationError())
        // A waiting consumer means the slot is empty: nothing is lost by ending it now.
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    // MARK: Consumer

    /// The final response head, once it has arrived.
    func head() async throws -> HTTPURLResponse {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<HTTPURLResponse, any Error>? in
                if let head = state.head { return .success(head) }
                switch state.end {
                case .failure(let error): return .failure(error)
                case .success: return .failure(Self.endedBeforeHead)
                case nil:
                    state.headWaiters.append(continuation)
                    return nil
                }
            }
            if let result { continuation.resume(with: result) }
        }
    }

    /// The next chunk; `nil` at the end of the body.
    ///
    /// - Parameter onCancel: called when the consumer's task is cancelled while it waits.
    func next(onCancel: @escaping @Sendable () -> Void) async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let (result, producer) = state.withLock {
                    state -> (Result<Data?, any Error>?, CheckedContinuation<Bool, any Error>?) in
                    if let chunk = state.slot {
                        state.slot = nil
                        defer { state.producer = nil }
                        return (.success(chunk), state.producer)
                    }
                    switch state.end {
                    case .success: return (.success(nil), nil)
                    case .failure(let error): return (.failure(error), nil)
                    case nil:
                        state.consumer = continuation
                        return (nil, nil)
                    }
                }
                producer?.resume(returning: false)
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            onCancel()
        }
    }
}
