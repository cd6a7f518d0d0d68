import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Progress values: throttling, rate, time left, and the final value of exactly 1.
struct TaskProgressTests {
    @Test
    func reportsAreThrottledButTheFirstAndTheTotalAlwaysGoOut() {
        var meter = ProgressMeter()
        meter.expect(total: 1000)
        let start = ContinuousClock.now
        #expect(meter.update(completed: 100, now: start) != nil)
        #expect(meter.update(completed: 200, now: start + .milliseconds(10)) == nil)
        #expect(meter.update(completed: 300, now: start + .milliseconds(49)) == nil)
        let later = meter.update(completed: 400, now: start + .milliseconds(50))
        #expect(later?.completed == 400)
        #expect(meter.update(completed: 1000, now: start + .milliseconds(51))?.fractionCompleted == 1)
    }

    @Test
    func rateAndTimeLeftFollowTheBytes() throws {
        var meter = ProgressMeter()
        meter.expect(total: 3000)
        let start = ContinuousClock.now
        _ = meter.update(completed: 0, now: start)
        let update = meter.update(completed: 1000, now: start + .seconds(1))
        let progress = try #require(update)
        #expect(abs(progress.throughput - 1000) < 0.001)
        #expect(abs((progress.estimatedTimeRemaining ?? -1) - 2) < 0.001)
    }

    @Test
    func aResumedTransferCountsOnlyNewBytesInItsRate() throws {
        var meter = ProgressMeter()
        meter.start(at: 5000)
        meter.expect(total: 6000)
        let start = ContinuousClock.now
        _ = meter.update(completed: 5000, now: start)
        let update = meter.update(completed: 5500, now: start + .seconds(1))
        let progress = try #require(update)
        #expect(abs(progress.throughput - 500) < 0.001)
        #expect(progress.fractionCompleted > 0.9)
    }

    @Test
    func finishingMakesTheFractionExactlyOneOnce() {
        var meter = ProgressMeter()
        meter.expect(total: 100)
        let start = ContinuousClock.now
        _ = meter.update(completed: 10, now: start)
        _ = meter.update(completed: 150, now: start + .milliseconds(1))  // a decompressed body outgrows its length
        let final = meter.finish(now: start + .milliseconds(2))
        #expect(final?.fractionCompleted == 1)
        #expect(final?.total == 150)
        #expect(final?.estimatedTimeRemaining == 0)
        #expect(meter.finish(now: start + .milliseconds(3)) == nil)

        var empty = ProgressMeter()
        #expect(empty.finish()?.fractionCompleted == 1)
    }

    @Test(arguments: TestTransports.names)
    func aDownloadReportsAtMostEvery50MillisecondsAndEndsAtOne(transport: String) async throws {
        let body = Data(count: 2 << 20)
        // The body stops at 256 KiB and at 512 KiB until the task has received it: the bytes in between reach the
        // task more than 50 ms after the last report and before the end, however far the transport reads ahead
        // (URLSessionTransport on Linux reads the whole body ahead of a busy session).
        let (first, second) = (256 * 1024, 512 * 1024)
        let server = try await RangeServer.start(
            body, chunkSize: 8 * 1024, chunkDelay: 0.001, holds: [first, second])
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
        defer { withExtendedLifetime(manager) {} }
        manager.responseSerializer = HTTPResponseSerializer()
        let reports = Locked([(ContinuousClock.Instant, TaskProgress)]())
        let outcome = Outcome()
        let task = manager.dataTask(
            with: URLRequest(url: server.fileURL),
            downloadProgress: { progress in reports.withLock { $0.append((.now, progress)) } },
            completionHandler: { _, _, error in outcome.fulfill(error) })
        task.resume()
        try await waitUntil { task.countOfBytesReceived >= first }
        try await Task.sleep(for: .milliseconds(60))
        server.proceed()
        try await waitUntil { task.countOfBytesReceived >= second }
        server.proceed()
        let error = try await outcome.value()
        #expect(error == nil, "\(String(describing: error))")
        let values = reports.value
        #expect(values.count >= 3)
        #expect(values.last?.1.fractionCompleted == 1.0)
        #expect(values.last?.1.completed == Int64(body.count))
        // Every report but the final one (which always goes out) is made at least 50 ms after the one before. The
        // closure's own clock reads when the report arrives, later than it was made by however long the delivering
        // thread waited for a core: one loaded run saw 45.5 ms between arrivals. 40 ms still catches a missing
        // throttle (reports then come a chunk apart, microseconds) or one set well short of 50 ms.
        for (previous, next) in zip(values.dropLast(), values.dropLast().dropFirst()) {
            #expect(next.0 - previous.0 >= .milliseconds(40))
        }
        let described = values.map { "\($0.1.completed)@\($0.0 - values[0].0)" }
        #expect(
            values.contains {
                $0.1.completed > first && $0.1.completed <= second && $0.1.throughput > 0
                    && $0.1.estimatedTimeRemaining != nil
            }, "\(described)")
    }
}
