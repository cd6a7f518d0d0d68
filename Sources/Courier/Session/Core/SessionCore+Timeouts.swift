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
        let now = ContinuousClock.now
        delegate.state.withLock { $0.armTimeouts(idle: idle, resource: resource, startDate: start) }
        let deadline = now.advanced(by: min(idle, resource))
        let startSweeper = timeouts.withLock { schedule -> Bool in
            schedule.arm(task.taskIdentifier, at: deadline)
            defer { schedule.sweeping = true }
            return !schedule.sweeping
        }
        if startSweeper { Self.timeoutQueue.async { self.sweepTimeouts() } }
    }

    /// Forgets a completed task's timeouts.
    func disarmTimeouts(of task: SessionTask) {
        timeouts.withLock { $0.disarm(task.taskIdentifier) }
    }

    /// Where every session's sweeper runs: a Dispatch queue, not the cooperative pool, so a timeout fires on time
    /// even while the application's own tasks keep the pool's threads busy (its width is the number of cores).
    private static let timeoutQueue = DispatchQueue(label: "Courier.SessionCore.timeouts")

    /// How long a sweeper sleeps at most, and how often a task whose consumer may be behind is looked at.
    private static let sweepInterval = Duration.milliseconds(250)

    /// One sweep, then the next scheduled at the nearest deadline (at least every 250 ms), instead of a timer per
    /// task: it cancels the runners of tasks that waited too long for bytes or ran out of time, and stops when no
    /// task is armed. It looks only at the tasks whose deadline has come (``TimeoutSchedule``), so its cost does not
    /// grow with the tasks in flight. A suspended task does not time out while it is suspended: its idle clock starts
    /// again when it resumes, as when a streamed body's consumer or a retrier's delay lets it go on; a streamed
    /// body's consumer can fall behind without telling the task, so such a task is looked at every sweep interval.
    private func sweepTimeouts() {
        let now = ContinuousClock.now
        let due = timeouts.withLock { $0.takeDue(at: now) }
        let dueEntries = due.isEmpty ? [] : entries.withLock { entries in due.map { ($0, entries[$0]) } }
        var rescheduled: [(task: Int, deadline: ContinuousClock.Instant)] = []
        var expired: [SessionTask] = []
        // Tasks found gone or completed need no more looking at.
        var gone: [Int] = []
        for (identifier, entry) in dueEntries {
            guard let entry, entry.task.state != .completed else {
                gone.append(identifier)
                continue
            }
            let consumerBehind = entry.delegate.consumerIsBehind
            if let deadline = entry.delegate.state.withLock({ $0.expire(now: now, consumerBehind: consumerBehind) }) {
                let soon = entry.delegate.streamsBody ? min(deadline, now + Self.sweepInterval) : deadline
                rescheduled.append((identifier, soon))
            } else {
                // Until it completes, in case its runner was not there to cancel yet.
                expired.append(entry.task)
                rescheduled.append((identifier, now + Self.sweepInterval))
            }
        }
        let next = timeouts.withLock { schedule -> ContinuousClock.Instant? in
            for item in rescheduled { schedule.reschedule(item.task, at: item.deadline) }
            for task in gone { schedule.disarm(task) }
            guard !schedule.isEmpty else {
                schedule.sweeping = false
                return nil
            }
            return min(schedule.nextDeadline ?? now + Self.sweepInterval, ContinuousClock.now + Self.sweepInterval)
        }
        for task in expired { task.cancelExecution() }
        guard let next else { return }
        let delay = max(Duration.zero, next - ContinuousClock.now)
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        Self.timeoutQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { self.sweepTimeouts() }
    }
}
