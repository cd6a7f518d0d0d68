/// The response of an exchange a ``CollectingTransport`` has started: awaited once, after the caller has done
/// whatever it had to do while the request was on its way.
///
/// The transport calls ``complete(_:)`` exactly once, from any thread; the session calls ``response()`` at most
/// once. Whichever comes second hands the result over, so the caller suspends only when the response is not there
/// yet. Cancelling the awaiting Swift task cancels the exchange through its ``ExchangeCancellation``.
final class CollectedResponse: Sendable {
    private enum State {
        case pending
        case arrived(Result<TransportResponse, any Error>)
        case awaited(CheckedContinuation<TransportResponse, any Error>)
        case delivered
    }

    private let state = Locked(State.pending)
    private let cancellation: ExchangeCancellation
    /// Reports a request body sent whole (its length) once the response is in.
    private let sentBody: (length: Int64, progress: @Sendable (Int64) -> Void)?

    init(cancellation: ExchangeCancellation, sentBody: (length: Int64, progress: @Sendable (Int64) -> Void)?) {
        self.cancellation = cancellation
        self.sentBody = sentBody
    }

    /// The transport's result: the response with its whole body, or a ``CourierError``.
    func complete(_ result: Result<TransportResponse, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<TransportResponse, any Error>? in
            switch state {
            case .pending:
                state = .arrived(result)
                return nil
            case .awaited(let continuation):
                state = .delivered
                return continuation
            case .arrived, .delivered:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// Waits for the response. Call it once.
    func response() async throws -> TransportResponse {
        defer { cancellation.clear() }
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<TransportResponse, any Error>? in
                    switch state {
                    case .pending:
                        state = .awaited(continuation)
                        return nil
                    case .arrived(let result):
                        state = .delivered
                        return result
                    case .awaited, .delivered:
                        return .failure(
                            CourierError.badServerResponse(
                                reason: "the response was awaited twice", underlyingError: nil,
                                context: CourierError.Context()))
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            cancellation.cancel()
        }
        if let sentBody { sentBody.progress(sentBody.length) }
        return response
    }
}
