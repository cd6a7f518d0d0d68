import Foundation

/// A limit on retries shared by a session's requests, so that a failing server is not hammered: within each
/// ``window``, retries may number at most ``minimumRetries`` plus ``ratio`` of the requests made.
///
/// ``RetryPolicy`` records each request when it is first adapted and withdraws one retry each time it would
/// retry; an empty budget means no retry.
public final class RetryBudget: Sendable {
    /// The share of requests that may be retried, in 0…1.
    public let ratio: Double
    /// Retries always allowed per window, however few the requests.
    public let minimumRetries: Int
    /// The length of a window.
    public let window: Duration

    private struct State {
        var started = ContinuousClock.now
        var requests = 0
        var retries = 0
    }

    private let state = Locked(State())

    /// A budget; by default 20 % of the requests plus 10 retries every 10 seconds.
    public init(ratio: Double = 0.2, minimumRetries: Int = 10, window: Duration = .seconds(10)) {
        self.ratio = ratio.isFinite ? min(1, max(0, ratio)) : 0
        self.minimumRetries = max(0, minimumRetries)
        self.window = window
    }

    /// Counts a request.
    public func recordRequest() {
        state.withLock { state in
            roll(&state)
            state.requests += 1
        }
    }

    /// Takes one retry; `false` when none is left in this window.
    public func withdraw() -> Bool {
        state.withLock { state in
            roll(&state)
            guard Double(state.retries) < Double(minimumRetries) + ratio * Double(state.requests) else { return false }
            state.retries += 1
            return true
        }
    }

    /// The retries left in this window.
    public var remaining: Int {
        state.withLock { state in
            roll(&state)
            return max(0, minimumRetries + Int(ratio * Double(state.requests)) - state.retries)
        }
    }

    private func roll(_ state: inout State) {
        if ContinuousClock.now - state.started >= window { state = State() }
    }
}
