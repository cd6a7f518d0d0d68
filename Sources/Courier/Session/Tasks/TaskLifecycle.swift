/// A task's lifecycle as a plain value: its state, whether it has started, and what each call must do, decided under
/// the task's lock and carried out outside it (``SessionTask`` holds it in its locked state and applies the actions).
///
/// Invariants: a task starts at most once, and only from ``SessionTask/State/suspended``; it completes at most once;
/// ``SessionTask/State/completed`` is final; every transition out of ``SessionTask/State/suspended`` releases the
/// callers waiting for it to run.
struct TaskLifecycle: Sendable, Hashable {
    private(set) var state: SessionTask.State = .suspended
    /// Whether the task has begun running (its first `resume()` or its `async` run).
    private(set) var started = false

    /// What a transition asks of the task, outside its lock.
    struct Actions: Sendable, Hashable {
        /// The state to tell the session about, if it changed.
        var announce: SessionTask.State?
        /// Start the task's run: its first resume.
        var start = false
        /// Release whoever waits while the task is suspended.
        var releaseWaiters = false
        /// Interrupt the Swift task running the task.
        var cancelRunner = false
        /// The task never started: the session completes it as cancelled.
        var completeUnstarted = false
    }

    /// `resume()`: a suspended task runs, starting if it never has.
    mutating func resume() -> Actions {
        guard state == .suspended else { return Actions() }
        state = .running
        defer { started = true }
        return Actions(announce: .running, start: !started, releaseWaiters: true)
    }

    /// `suspend()`: a running task pauses.
    mutating func suspend() -> Actions {
        guard state == .running else { return Actions() }
        state = .suspended
        return Actions(announce: .suspended)
    }

    /// `cancel()`: a suspended or running task winds down; one that never started is completed by the session.
    mutating func cancel() -> Actions {
        guard state == .suspended || state == .running else { return Actions() }
        state = .canceling
        return Actions(announce: .canceling, releaseWaiters: true, cancelRunner: true, completeUnstarted: !started)
    }

    /// The `async` API's run, which the caller's task drives: `false` when the task was cancelled, completed or run
    /// already.
    mutating func beginRun() -> Bool {
        guard state == .suspended, !started else { return false }
        state = .running
        started = true
        return true
    }

    /// Completion: `false` when the task had completed already (it completes exactly once).
    mutating func complete() -> Bool {
        guard state != .completed else { return false }
        state = .completed
        return true
    }
}
