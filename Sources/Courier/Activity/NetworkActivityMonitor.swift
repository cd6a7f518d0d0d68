import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tells whether network activity is going on, with AFNetworkActivityIndicatorManager's delays, for a status bar
/// indicator or a terminal spinner.
///
/// The monitor counts requests in flight: every task of the sessions it watches from the moment it resumes until it
/// is suspended or completes, plus what ``incrementActivityCount()`` and ``decrementActivityCount()`` add. The
/// indicator becomes visible only when activity has lasted ``activationDelay`` (1 s), so short requests never show
/// it, and hides ``completionDelay`` (0.17 s) after the last one ends, so back-to-back requests keep it steady.
///
/// Watch a session by putting the monitor in its ``SessionConfiguration/eventMonitors``, or, for a session that
/// exists already, with ``observe(_:)``; any number of sessions can be watched at once. Nothing happens until
/// ``isEnabled`` is set, as in AFNetworking.
///
/// ```swift
/// let activity = NetworkActivityMonitor.shared
/// activity.isEnabled = true
/// activity.setNetworkingActivityActionBlock { visible in spinner.isHidden = !visible }
/// activity.observe(manager)
/// ```
///
/// The action block runs on the monitor's own serial queue, once per change of visibility. On Apple platforms
/// UIKit's status-bar indicator (`isNetworkActivityIndicatorVisible`) has done nothing since iOS 13, so the monitor
/// does not drive it: set the action block to show your own.
public final class NetworkActivityMonitor: EventMonitor, Sendable {
    private struct State {
        var isEnabled = false
        var activationDelay: TimeInterval = 1.0
        var completionDelay: TimeInterval = 0.17
        var phase = Phase.notActive
        /// Counted by hand (``incrementActivityCount()``).
        var manualCount = 0
        /// The tasks in flight in the watched sessions.
        var tasks = Set<ObjectIdentifier>()
        /// Bumped whenever a phase with a timer is entered, so an older timer firing changes nothing.
        var timerGeneration = 0
        var action: (@Sendable (Bool) -> Void)?

        var activityCount: Int { manualCount + tasks.count }
    }

    private let state = Locked(State())
    private let serial = DispatchQueue(label: "Courier.NetworkActivityMonitor")

    /// The monitor most apps need.
    public static let shared = NetworkActivityMonitor()

    /// A monitor watching nothing yet.
    public init() {}

    /// Whether the monitor tracks activity and reports visibility; default `false`. Turning it off hides the
    /// indicator.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set {
            state.withLock { $0.isEnabled = newValue }
            newValue ? update { $0.afterActivityChange(occurring: $1) } : reset()
        }
    }

    /// How long activity must last before the indicator shows; default 1 s.
    public var activationDelay: TimeInterval {
        get { state.withLock { $0.activationDelay } }
        set { state.withLock { $0.activationDelay = max(0, newValue) } }
    }

    /// How long the indicator stays after activity ends; default 0.17 s.
    public var completionDelay: TimeInterval {
        get { state.withLock { $0.completionDelay } }
        set { state.withLock { $0.completionDelay = max(0, newValue) } }
    }

    /// Whether the indicator should be visible now.
    public var isNetworkActivityIndicatorVisible: Bool { state.withLock { $0.phase.isVisible } }

    /// Requests in flight: the watched sessions' running tasks plus the manual count.
    public var activityCount: Int { state.withLock { $0.activityCount } }

    /// Called with the new visibility each time it changes, on the monitor's serial queue.
    public func setNetworkingActivityActionBlock(_ block: (@Sendable (_ visible: Bool) -> Void)?) {
        state.withLock { $0.action = block }
    }

    /// Counts one more request in flight (one that no watched session runs).
    public func incrementActivityCount() {
        state.withLock { $0.manualCount += 1 }
        update { $0.afterActivityChange(occurring: $1) }
    }

    /// Counts one request fewer; never below zero.
    public func decrementActivityCount() {
        state.withLock { $0.manualCount = max(0, $0.manualCount - 1) }
        update { $0.afterActivityChange(occurring: $1) }
    }

    /// Watches `session`'s tasks from now on (through ``SessionManager/events()``), until it is invalidated.
    public func observe(_ session: SessionManager) {
        let events = session.events()
        Task { [weak self] in
            for await event in events {
                switch event {
                case .didResume(let task): self?.started(task)
                case .didSuspend(let task), .didComplete(let task, _): self?.ended(task)
                }
            }
        }
    }

    // MARK: EventMonitor

    /// The monitor's serial queue.
    public var queue: DispatchQueue? { serial }

    public func taskResumed(_ task: SessionTask) { started(task) }
    public func taskSuspended(_ task: SessionTask) { ended(task) }
    public func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) { ended(task) }

    // MARK: The state machine

    private func started(_ task: SessionTask) {
        let inserted = state.withLock { $0.tasks.insert(ObjectIdentifier(task)).inserted }
        if inserted { update { $0.afterActivityChange(occurring: $1) } }
    }

    private func ended(_ task: SessionTask) {
        let removed = state.withLock { $0.tasks.remove(ObjectIdentifier(task)) != nil }
        if removed { update { $0.afterActivityChange(occurring: $1) } }
    }

    /// Moves to the phase `next` gives (from the current phase and whether activity is occurring), starts the new
    /// phase's timer, and reports a change of visibility.
    private func update(generation: Int? = nil, _ next: (Phase, Bool) -> Phase) {
        let change = state.withLock {
            state -> (timer: (Phase.Timer, TimeInterval, Int)?, visible: Bool?, action: (@Sendable (Bool) -> Void)?)? in
            guard state.isEnabled, generation == nil || generation == state.timerGeneration else { return nil }
            let old = state.phase
            let new = next(old, state.activityCount > 0)
            guard new != old else { return nil }
            state.phase = new
            var timer: (Phase.Timer, TimeInterval, Int)?
            if let kind = new.timer {
                state.timerGeneration += 1
                let delay = kind == .activation ? state.activationDelay : state.completionDelay
                timer = (kind, delay, state.timerGeneration)
            }
            let visible = old.isVisible != new.isVisible ? new.isVisible : nil
            return (timer, visible, state.action)
        }
        guard let change else { return }
        if let (kind, delay, generation) = change.timer {
            serial.asyncAfter(deadline: .now() + delay) { [weak self] in
                self?.update(generation: generation) { phase, occurring in
                    kind == .activation ? phase.afterActivationDelay(occurring: occurring) : phase.afterCompletionDelay
                }
            }
        }
        if let visible = change.visible, let action = change.action {
            serial.async { action(visible) }
        }
    }

    /// Back to not active, hiding the indicator if it showed.
    private func reset() {
        let hidden = state.withLock { state -> (@Sendable (Bool) -> Void)?? in
            let wasVisible = state.phase.isVisible
            state.phase = .notActive
            state.timerGeneration += 1
            return wasVisible ? .some(state.action) : nil
        }
        if let hidden, let action = hidden { serial.async { action(false) } }
    }
}
