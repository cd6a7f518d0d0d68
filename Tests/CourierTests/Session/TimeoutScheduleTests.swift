import Foundation
import Testing

@testable import Courier

/// ``TimeoutSchedule`` without a session: a sweep takes out only the tasks that are due, each once, and the heap
/// stays bounded by the tasks armed whatever comes and goes.
struct TimeoutScheduleTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("A sweep takes out the tasks due, earliest first, and leaves the rest")
    func takesOutOnlyWhatIsDue() {
        var schedule = TimeoutSchedule()
        for (task, deadline) in [(1, 300), (2, 100), (3, 500), (4, 200)] { schedule.arm(task, at: at(deadline)) }
        #expect(schedule.nextDeadline == at(100))
        #expect(schedule.takeDue(at: at(250)) == [2, 4])
        #expect(schedule.takeDue(at: at(250)) == [])
        #expect(schedule.nextDeadline == at(300))
        #expect(schedule.takeDue(at: at(1000)) == [1, 3])
    }

    @Test("A task scheduled again comes out once, at its new deadline")
    func aRescheduledTaskComesOutOnce() {
        var schedule = TimeoutSchedule()
        schedule.arm(1, at: at(100))
        schedule.arm(1, at: at(400))  // armed again: the first entry is stale
        #expect(schedule.takeDue(at: at(200)) == [])
        #expect(schedule.takeDue(at: at(400)) == [1])
        schedule.reschedule(1, at: at(600))
        #expect(schedule.takeDue(at: at(599)) == [])
        #expect(schedule.takeDue(at: at(600)) == [1])
    }

    @Test("A disarmed task never comes out, and a sweep cannot schedule it again")
    func aDisarmedTaskIsGone() {
        var schedule = TimeoutSchedule()
        schedule.arm(1, at: at(100))
        schedule.arm(2, at: at(100))
        #expect(schedule.takeDue(at: at(100)).sorted() == [1, 2])
        schedule.disarm(1)  // completed while the sweep looked at it
        schedule.reschedule(1, at: at(200))
        schedule.reschedule(2, at: at(200))
        #expect(schedule.takeDue(at: at(1000)) == [2])
        schedule.disarm(2)
        #expect(schedule.isEmpty)
    }

    @Test("The heap stays within twice the tasks armed plus its slack, however many come and go")
    func theHeapStaysBounded() {
        var schedule = TimeoutSchedule()
        var largest = 0
        // Ten tasks in flight at a time, 100,000 in all, each armed with a deadline far off and completed before it.
        for task in 0..<100_000 {
            schedule.arm(task, at: at(60_000 + task))
            if task >= 10 { schedule.disarm(task - 10) }
            largest = max(largest, schedule.heapCount)
        }
        #expect(largest <= 2 * 11 + TimeoutSchedule.slack)
        // A flood: 10,000 armed at once, then completed one by one.
        for task in 200_000..<210_000 { schedule.arm(task, at: at(60_000)) }
        for task in 200_000..<210_000 { schedule.disarm(task) }
        #expect(schedule.heapCount <= 2 * 10 + TimeoutSchedule.slack)
        #expect(schedule.takeDue(at: at(1_000_000)).count == 10)
    }
}
