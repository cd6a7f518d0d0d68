/// A switch that cancels one task's exchanges from any thread, independently of the Swift task awaiting them.
///
/// A session's timeouts and ``SessionTask/cancel()`` must interrupt a task even when it runs inline in the caller's
/// Swift task, whose own cancellation belongs to the caller. A transport that implements ``Transport/collect(_:cancellation:activity:)`` registers how to abort the
/// exchange in flight with ``onCancel(_:)``; ``cancel()`` aborts it, and every later exchange at once.
///
/// Invariant: once cancelled it stays cancelled, and each registered handler runs at most once.
public final class ExchangeCancellation: Sendable {
    private struct State {
        var cancelled = false
        var handler: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// A switch that has not been thrown.
    public init() {}

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels the exchange in flight, if any, and every later one.
    public func cancel() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            defer { state.handler = nil }
            return state.handler
        }
        handler?()  // outside the lock: it may call back into the transport
    }

    /// Makes `handler` the way to abort the exchange in flight, replacing the previous exchange's; runs it at once
    /// when already cancelled.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard !state.cancelled else { return true }
            state.handler = handler
            return false
        }
        if runNow { handler() }
    }

    /// Forgets the handler of an exchange that has ended.
    public func clear() {
        state.withLock { $0.handler = nil }
    }
}
