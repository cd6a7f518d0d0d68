import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``TaskState``'s transitions without a session or a server: what each one counts, reports and decides.
struct TaskStateTests {
    private let start = ContinuousClock.now

    @Test("Each chunk is counted once, kept only when asked, and its progress reported at most every 50 ms")
    func receivedCountsAndThrottles() {
        var state = TaskState()
        state.expectDownload(expected: 30, progressTotal: 30)
        let first = state.received(Data(repeating: 1, count: 10), keep: true, watched: true, now: start)
        let soon = state.received(
            Data(repeating: 2, count: 10), keep: false, watched: true, now: start + .milliseconds(10))
        let last = state.received(
            Data(repeating: 3, count: 10), keep: true, watched: true, now: start + .milliseconds(20))
        #expect(state.bytesReceived == 30)
        #expect(state.bytesExpectedToReceive == 30)
        #expect(state.data == Data(repeating: 1, count: 10) + Data(repeating: 3, count: 10))
        #expect(first?.progress.completed == 10)
        #expect(soon == nil)  // too soon after the first
        #expect(last?.progress.completed == 30)  // reaching the total is never dropped
    }

    @Test("A HEAD's progress expects nothing while the task still reports the declared length")
    func headExpectsNoBody() {
        var state = TaskState()
        state.expectDownload(expected: 1234, progressTotal: 0)
        #expect(state.bytesExpectedToReceive == 1234)
        #expect(state.download.progress.total == 0)
    }

    @Test("Sent bytes move the task's count and the upload's progress together")
    func sentCounts() {
        var state = TaskState()
        state.expectUpload(total: 100)
        let report = state.sent(total: 40, watched: true)
        #expect(state.bytesSent == 40)
        #expect(state.bytesExpectedToSend == 100)
        #expect(report?.progress.completed == 40)
        #expect(report?.progress.total == 100)
    }

    @Test("A direction nobody watches reports nothing but still counts, and reports once it is watched")
    func unwatchedProgressCountsWithoutReports() {
        var state = TaskState()
        state.expectDownload(expected: 30, progressTotal: 30)
        let unwatched = state.received(Data(count: 10), keep: false, watched: false, now: start)
        #expect(unwatched == nil)
        #expect(state.download.progress.completed == 10)  // what `downloadProgress(for:)` reads
        let watched = state.received(Data(count: 10), keep: false, watched: true, now: start + .milliseconds(1))
        #expect(watched?.progress.completed == 20)  // the first watched report is never throttled
        let (_, download, _) = state.finishProgress(succeeded: true, hadUpload: false, watched: (false, false))
        #expect(download == nil)
        #expect(state.download.progress.fractionCompleted == 1)
    }

    @Test("Completion happens once and makes the metrics from the one set of counters")
    func completeOnceWithMetrics() throws {
        var state = TaskState()
        let started = Date(timeIntervalSince1970: 1000)
        state.armTimeouts(idle: .seconds(60), resource: .seconds(600), startDate: started)
        state.beginExchange(request: nil)
        state.recordTransaction(
            TransactionMetrics(method: "GET", url: try #require(URL(string: "http://a/"))), at: started)
        state.followedRedirect()
        state.beginExchange(request: URLRequest(url: try #require(URL(string: "http://b/"))))
        state.recordTransaction(
            TransactionMetrics(method: "GET", url: try #require(URL(string: "http://b/"))), at: started)
        state.retried()
        _ = state.received(Data(count: 5), keep: true, watched: true)
        let end = started.addingTimeInterval(2)
        let completed = state.complete(error: nil, end: end)
        let completedAgain = state.complete(error: CancellationError(), end: end)
        #expect(completed)
        #expect(!completedAgain)
        #expect(state.error == nil)
        #expect(state.state == .completed)
        #expect(state.currentRequest?.url?.host == "b")
        #expect(state.retryCount == 1)
        let metrics = try #require(state.metrics)
        #expect(metrics.exchangeCount == 2)
        #expect(metrics.redirectCount == 1)
        #expect(metrics.countOfBytesReceived == 5)
        #expect(metrics.taskInterval == DateInterval(start: started, end: end))
        // The first transaction ended when the second began; the last one ends with the task.
        #expect(metrics.transactionMetrics.map(\.responseEndDate) == [started, end])
    }

    @Test("The idle timeout fires after the silence, and the task is marked timed out")
    func idleTimeout() {
        var clocks = TaskState.Clocks()
        clocks.idleTimeout = .seconds(1)
        clocks.resourceDeadline = start + .seconds(100)
        clocks.lastActivity = start
        let early = clocks.expire(now: start + .milliseconds(500), suspended: false)
        #expect(early == start + .seconds(1))
        #expect(!clocks.timedOut)
        let late = clocks.expire(now: start + .seconds(2), suspended: false)
        #expect(late == nil)
        #expect(clocks.timedOut)
    }

    @Test(
        "A suspended task, one waiting for its consumer and one waiting to retry are never idle; the resource deadline still holds"
    )
    func waitingIsNotIdle() {
        for wait in ["suspended", "consumer", "retry"] {
            var clocks = TaskState.Clocks()
            clocks.idleTimeout = .seconds(1)
            clocks.resourceDeadline = start + .seconds(10)
            clocks.lastActivity = start
            clocks.waitingForConsumer = wait == "consumer"
            clocks.waitingToRetry = wait == "retry"
            let suspended = wait == "suspended"
            let waiting = clocks.expire(now: start + .seconds(5), suspended: suspended)
            #expect(waiting == start + .seconds(6), "\(wait)")
            let pastResourceDeadline = clocks.expire(now: start + .seconds(10), suspended: suspended)
            #expect(pastResourceDeadline == nil, "\(wait)")
        }
    }

    @Test("A streamed chunk waiting for its consumer stops the idle clock, whatever the runner does meanwhile")
    func consumerBehindIsNotIdle() {
        var state = TaskState()
        _ = state.resume()
        state.armTimeouts(idle: .seconds(1), resource: .seconds(100), startDate: Date())
        let now = ContinuousClock.now + .seconds(5)
        let behind = state.expire(now: now, consumerBehind: true)
        #expect(behind == now + .seconds(1))
        let caughtUp = state.expire(now: now + .seconds(2), consumerBehind: false)
        #expect(caughtUp == nil)
        #expect(state.clocks.timedOut)
    }

    @Test("A task with no timeouts armed is looked at again in an hour")
    func unarmed() {
        var clocks = TaskState.Clocks()
        let next = clocks.expire(now: start, suspended: false)
        #expect(next == start + .seconds(3600))
    }

    @Test("After a success, progress ends at fraction 1 (the upload's only if there was one); streams end")
    func finishProgress() async {
        var state = TaskState()
        let (stream, continuation) = AsyncStream.makeStream(of: TaskProgress.self)
        state.addStream(continuation, upload: false)
        state.expectDownload(expected: -1, progressTotal: -1)
        _ = state.received(Data(count: 7), keep: true, watched: false)
        let (upload, download, streams) = state.finishProgress(
            succeeded: true, hadUpload: false, watched: (false, false))
        #expect(upload == nil)
        #expect(download?.progress.fractionCompleted == 1)
        #expect(download?.progress.total == 7)
        streams.forEach { $0.finish() }
        var seen: [Int64] = []
        for await progress in stream { seen.append(progress.completed) }
        #expect(seen == [0])  // the value when added; the reports are yielded by the delegate outside the lock
        // A stream added once progress has ended gets the last value and ends at once.
        let (late, lateContinuation) = AsyncStream.makeStream(of: TaskProgress.self)
        state.addStream(lateContinuation, upload: false)
        var lateSeen: [Int64] = []
        for await progress in late { lateSeen.append(progress.completed) }
        #expect(lateSeen == [7])
    }

    @Test("A failure reports no final progress")
    func failureReportsNothing() {
        var state = TaskState()
        state.expectUpload(total: 10)
        _ = state.sent(total: 5, watched: true)
        let (upload, download, _) = state.finishProgress(
            succeeded: false, hadUpload: true, watched: (true, true))
        #expect(upload == nil)
        #expect(download == nil)
    }

    @Test("Waiters wait only while the task is suspended, and resuming releases them")
    func waitersReleased() async {
        let state = Locked(TaskState())
        await withCheckedContinuation { continuation in
            let kept = state.withLock { $0.wait(continuation) }
            #expect(kept)
            let actions = state.withLock { $0.resume() }  // releases the continuation, or this test hangs
            #expect(actions.releaseWaiters)
        }
        let keptWhileRunning = Locked(true)
        await withCheckedContinuation { continuation in
            let kept = state.withLock { $0.wait(continuation) }
            keptWhileRunning.withLock { $0 = kept }
            if !kept { continuation.resume() }
        }
        #expect(!keptWhileRunning.value)
        #expect(state.withLock { $0.state } == .running)
    }
}
