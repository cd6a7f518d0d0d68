/// When each running task of a session is next to be checked for a timeout: a min-heap of deadlines, so that a sweep
/// looks only at the tasks that are due instead of every task the session runs.
///
/// A task's timeouts only move later (activity restarts its idle clock; its resource deadline is fixed), so the
/// deadline a task was scheduled at is never later than the one it really has: a task found not yet expired when its
/// turn comes is scheduled again at its new deadline. A plain value, kept under its owner's lock.
///
/// Invariants: each armed task has one live entry in the heap, the one whose deadline ``armed`` records, except while
/// a sweep checks it (taken out by ``takeDue(at:)``, not yet rescheduled); entries of tasks disarmed or rescheduled
/// are stale and are dropped when they come out or when the heap is compacted, so the heap never holds more than
/// twice the armed tasks plus ``slack`` entries.
struct TimeoutSchedule {
    struct Entry {
        var deadline: ContinuousClock.Instant
        var task: Int
    }

    /// How many stale entries the heap may hold beyond the armed tasks before it is compacted.
    static let slack = 64

    private var heap: [Entry] = []
    /// Each armed task's deadline in the heap, by task identifier.
    private var armed: [Int: ContinuousClock.Instant] = [:]
    /// Whether a sweeper is running for these tasks.
    var sweeping = false

    var isEmpty: Bool { armed.isEmpty }

    /// How many entries the heap holds, stale ones included (for tests).
    var heapCount: Int { heap.count }

    /// The earliest deadline of an armed task, if any (a stale entry's may come first: it is never later than its
    /// task's).
    var nextDeadline: ContinuousClock.Instant? { heap.first?.deadline }

    /// Schedules `task` to be checked at `deadline`, in place of any earlier schedule.
    mutating func arm(_ task: Int, at deadline: ContinuousClock.Instant) {
        armed[task] = deadline
        push(Entry(deadline: deadline, task: task))
        compactIfNeeded()
    }

    /// Forgets `task` (it completed).
    mutating func disarm(_ task: Int) {
        guard armed.removeValue(forKey: task) != nil else { return }
        compactIfNeeded()
    }

    /// Schedules `task` again at `deadline` after a sweep checked it, unless it was disarmed meanwhile.
    mutating func reschedule(_ task: Int, at deadline: ContinuousClock.Instant) {
        guard armed[task] != nil else { return }
        arm(task, at: deadline)
    }

    /// Takes out the tasks due at `now`. They stay armed, unscheduled, until the caller checks each and
    /// ``reschedule(_:at:)``s or ``disarm(_:)``s it.
    mutating func takeDue(at now: ContinuousClock.Instant) -> [Int] {
        var due: [Int] = []
        while let first = heap.first, first.deadline <= now {
            popFirst()
            if armed[first.task] == first.deadline { due.append(first.task) }
        }
        return due
    }

    // MARK: Heap

    private mutating func compactIfNeeded() {
        guard heap.count > 2 * armed.count + Self.slack else { return }
        heap.removeAll { armed[$0.task] != $0.deadline }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(from: 0)
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }
}
