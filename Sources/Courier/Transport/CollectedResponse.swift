/// The response of an exchange a transport has started with ``Transport/startCollecting(_:cancellation:activity:)``: awaited once, after the caller has done
/// whatever it had to do while the request was on its way.
///
/// The transport calls ``complete(_:)`` exactly once, from any thread; the session calls ``response()`` at most
/// once. Whichever comes second hands the result over, so the caller suspends only when the response is not there
/// yet. The transport may also call ``headArrived()`` when the rest of a small response is bound to follow at once:
/// a waiting caller then starts waking up while the transport finishes the exchange, and finds the result ready or
/// waits again. Cancelling the awaiting Swift task cancels the exchange through its ``ExchangeCancellation``.
public final class CollectedResponse: Sendable {
    private struct State {
        var result: Result<TransportResponse, any Error>?
        /// The caller, suspended until the result (`true`) or an early head (`false`) arrives.
        var waiter: CheckedContinuation<Bool, Never>?
        var delivered = false
    }

    private let state = Locked(State())
    private let cancellation: ExchangeCancellation
    /// Reports a request body sent whole (its length) once the response is in.
    private let sentBody: (length: Int64, progress: @Sendable (Int64) -> Void)?

    /// Creates the pending response of an exchange that `cancellation` aborts; `sentBody`, when given, reports a
    /// request body of that length as sent once the response is in.
    public init(
        cancellation: ExchangeCancellation, sentBody: (length: Int64, progress: @Sendable (Int64) -> Void)? = nil
    ) {
        self.cancellation = cancellation
        self.sentBody = sentBody
    }

    /// The transport's result: the response with its whole body, or a ``CourierError``. Later calls are ignored.
    public func complete(_ result: Result<TransportResponse, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// The head of a small response is in and its body follows at once: wakes a waiting caller early, so its
    /// wake-up overlaps the rest of the exchange.
    public func headArrived() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    /// The result once it is there, handed out once: a second call fails.
    private func takeResult() -> Result<TransportResponse, any Error> {
        state.withLock { state in
            guard !state.delivered, let result = state.result else {
                return .failure(
                    CourierError.badServerResponse(
                        reason: "the response was awaited twice", underlyingError: nil,
                        context: CourierError.Context()))
            }
            state.delivered = true
            return result
        }
    }

    /// Waits for the response. Call it once.
    public func response() async throws -> TransportResponse {
        defer { cancellation.clear() }
        // The continuation carries no value and the result is taken from the state afterwards, so this frame,
        // which every request waiting for a connection keeps, holds no response.
        await withTaskCancellationHandler {
            while true {
                let ready = await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        if state.delivered || state.result != nil { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume(returning: true) }
                }
                if ready { return }
                // Woken for the head: the result is normally there by now; if not, wait again.
            }
        } onCancel: {
            cancellation.cancel()
        }
        let response = try takeResult().get()
        if let sentBody { sentBody.progress(sentBody.length) }
        return response
    }
}
