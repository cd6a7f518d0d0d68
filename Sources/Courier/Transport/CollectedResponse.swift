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
        /// The caller, suspended until the result (or an early head) arrives.
        var waiter: CheckedContinuation<Result<TransportResponse, any Error>?, Never>?
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
        let waiter = state.withLock { state -> CheckedContinuation<Result<TransportResponse, any Error>?, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.delivered = true  // handed to the waiter below
            return waiter
        }
        waiter?.resume(returning: result)
    }

    /// The head of a small response is in and its body follows at once: wakes a waiting caller early, so its
    /// wake-up overlaps the rest of the exchange.
    public func headArrived() {
        let waiter = state.withLock { state -> CheckedContinuation<Result<TransportResponse, any Error>?, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Waits for the response. Call it once.
    public func response() async throws -> TransportResponse {
        defer { cancellation.clear() }
        let result = await withTaskCancellationHandler {
            while true {
                let ready = await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Result<TransportResponse, any Error>?? in
                        if state.delivered {
                            return .some(
                                .failure(
                                    CourierError.badServerResponse(
                                        reason: "the response was awaited twice", underlyingError: nil,
                                        context: CourierError.Context())))
                        }
                        if let result = state.result {
                            state.delivered = true
                            return .some(result)
                        }
                        state.waiter = continuation
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
                if let ready { return ready }
                // Woken for the head: the result is normally there by now; if not, wait again.
            }
        } onCancel: {
            cancellation.cancel()
        }
        let response = try result.get()
        if let sentBody { sentBody.progress(sentBody.length) }
        return response
    }
}
