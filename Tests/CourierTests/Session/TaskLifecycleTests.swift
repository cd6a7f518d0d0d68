import Testing

@testable import Courier

/// ``TaskLifecycle``'s transitions, without a session or a server: what each call does from each state.
struct TaskLifecycleTests {
    typealias Actions = TaskLifecycle.Actions

    @Test("resume starts a task once; resuming a running task does nothing")
    func resumeStartsOnce() {
        var lifecycle = TaskLifecycle()
        #expect(lifecycle.resume() == Actions(announce: .running, start: true, releaseWaiters: true))
        #expect(lifecycle.state == .running && lifecycle.started)
        #expect(lifecycle.resume() == Actions())
        #expect(lifecycle.suspend() == Actions(announce: .suspended))
        // Resuming after a suspension continues the task: it is not started again.
        #expect(lifecycle.resume() == Actions(announce: .running, start: false, releaseWaiters: true))
    }

    @Test("suspend pauses only a running task")
    func suspendOnlyWhileRunning() {
        var lifecycle = TaskLifecycle()
        #expect(lifecycle.suspend() == Actions())
        _ = lifecycle.resume()
        #expect(lifecycle.suspend() == Actions(announce: .suspended))
        #expect(lifecycle.suspend() == Actions())
        #expect(lifecycle.state == .suspended)
    }

    @Test("cancel before the start has the session complete the task; after it, interrupts the run")
    func cancel() {
        var unstarted = TaskLifecycle()
        #expect(
            unstarted.cancel()
                == Actions(announce: .canceling, releaseWaiters: true, cancelRunner: true, completeUnstarted: true))
        #expect(unstarted.cancel() == Actions())
        #expect(unstarted.resume() == Actions())
        let begunAfterCancel = unstarted.beginRun()
        #expect(!begunAfterCancel)

        var running = TaskLifecycle()
        _ = running.resume()
        #expect(
            running.cancel()
                == Actions(announce: .canceling, releaseWaiters: true, cancelRunner: true, completeUnstarted: false))
    }

    @Test("The async run begins once, only from a task never started")
    func beginRun() {
        var lifecycle = TaskLifecycle()
        let begun = lifecycle.beginRun()
        #expect(begun)
        #expect(lifecycle.state == .running && lifecycle.started)
        let begunAgain = lifecycle.beginRun()
        #expect(!begunAgain)
        #expect(lifecycle.resume() == Actions())

        var resumed = TaskLifecycle()
        _ = resumed.resume()
        _ = resumed.suspend()
        let begunAfterResume = resumed.beginRun()
        #expect(!begunAfterResume, "a task already started by resume() is not run again")
    }

    @Test("A task completes exactly once, and nothing moves it afterwards")
    func completeOnce() {
        let preparations: [(inout TaskLifecycle) -> Void] = [{ _ in }, { _ = $0.resume() }, { _ = $0.cancel() }]
        for prepare in preparations {
            var lifecycle = TaskLifecycle()
            prepare(&lifecycle)
            let completed = lifecycle.complete()
            #expect(completed)
            let completedAgain = lifecycle.complete()
            #expect(!completedAgain)
            #expect(lifecycle.state == .completed)
            #expect(lifecycle.resume() == Actions())
            #expect(lifecycle.suspend() == Actions())
            #expect(lifecycle.cancel() == Actions())
            let begunAfterCompletion = lifecycle.beginRun()
            #expect(!begunAfterCompletion)
        }
    }
}
