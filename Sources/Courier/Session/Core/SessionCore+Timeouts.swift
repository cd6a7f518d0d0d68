import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Timeouts: the request (idle) timeout and the resource timeout of every running task, enforced by one sweeper
/// per session.
extension SessionCore {
    /// The bookkeeping of a task's start that need not precede its first request: the `resumed` event and the
    /// timeouts, which count from `startDate`.
    func announceStart(of task: SessionTask, delegate: TaskDelegate, startDate: Date) {
        events.send(.resumed(task), of: delegate)  // armTimeouts notes the activity
        armTimeouts(for: task, delegate: delegate, startDate: startDate)
    }

    /// Arms the task's timeouts, notes its start (`startDate`, when it started before this call), and makes sure the
    /// sweeper that enforces them is running.
    func armTimeouts(for task: SessionTask, delegate: TaskDelegate, startDate: Date? = nil) {
        // A request's own timeout when it was changed from `URLRequest`'s default, else the configuration's.
        let requestTimeout = task.requestSource.timeoutInterval ?? configuration.timeoutIntervalForRequest
        let idle = CheckedConversion.duration(requestTimeout)
        let resource = CheckedConversion.duration(configuration.timeoutIntervalForResource)
        let start = startDate ?? Date()
        delegate.state.withLock { $0.armTimeouts(idle: idle, resource: resource, startDate: start) }
        let startSweeper = sweeperRunning.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        if startSweeper { Self.timeoutQueue.async { self.sweepTimeouts() } }
    }

    /// Where every session's sweeper runs: a Dispatch queue, not the cooperative pool, so a timeout fires on time
    /// even while the application's own tasks keep the pool's threads busy (its width is the number of cores).
    private static let timeoutQueue = DispatchQueue(label: "Courier.SessionCore.timeouts")

    /// One sweep, then the next scheduled at the nearest deadline (at least every 250 ms), instead of a timer per
    /// task: it cancels the runners of tasks that waited too long for bytes or ran out of time, and stops when no
    /// task is left. A suspended task does not time out while it is suspended.
    private func sweepTimeouts() {
        let now = ContinuousClock.now
        var nearest = now + .milliseconds(250)
        let running = entries.withLock { entries in entries.values.filter { $0.task.state != .completed } }
        if running.isEmpty {
            let stop = sweeperRunning.withLock { running -> Bool in
                // A task registered since the snapshot keeps the sweeper alive.
                let idle = entries.withLock { $0.isEmpty }
                if idle { running = false }
                return idle
            }
            if stop { return }
        }
        for entry in running {
            let consumerBehind = entry.delegate.consumerIsBehind
            if let deadline = entry.delegate.state.withLock({ $0.expire(now: now, consumerBehind: consumerBehind) }) {
                nearest = min(nearest, deadline)
            } else {
                entry.task.cancelExecution()
            }
        }
        let delay = max(Duration.zero, nearest - ContinuousClock.now)
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        Self.timeoutQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { self.sweepTimeouts() }
    }
}
