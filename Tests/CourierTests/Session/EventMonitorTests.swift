import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every change of a task reaches an ``EventMonitor`` exactly once, on both transports, through the session's one
/// event pipeline; hooks, notifications and `events()` see the same changes.
@Suite struct EventMonitorTests {
    /// Records every event it hears, per task.
    final class RecordingMonitor: EventMonitor {
        let queue: DispatchQueue? = DispatchQueue(label: "EventMonitorTests.monitor")
        private let log = Locked([String]())
        private let sent = Locked([Int: Int64]())
        private let received = Locked([Int: Int]())
        private let metrics = Locked([Int: TaskMetrics]())
        let onMonitorQueue = Locked(true)

        var entries: [String] { log.value }

        func count(_ name: String, _ task: SessionTask? = nil) -> Int {
            let wanted = task.map { "\(name) \($0.taskIdentifier)" } ?? name
            return log.value.filter { task == nil ? $0.hasPrefix(name + " ") || $0 == name : $0 == wanted }.count
        }

        func totalSent(_ task: SessionTask) -> Int64? { sent.value[task.taskIdentifier] }
        func bytesReceived(_ task: SessionTask) -> Int { received.value[task.taskIdentifier] ?? 0 }
        func metrics(_ task: SessionTask) -> TaskMetrics? { metrics.value[task.taskIdentifier] }

        private func record(_ name: String, _ task: SessionTask?) {
            if let queue { dispatchPrecondition(condition: .onQueue(queue)) }
            log.withLock { $0.append(task.map { "\(name) \($0.taskIdentifier)" } ?? name) }
        }

        func taskCreated(_ task: SessionTask) { record("created", task) }
        func taskResumed(_ task: SessionTask) { record("resumed", task) }
        func taskSuspended(_ task: SessionTask) { record("suspended", task) }
        func taskCancelled(_ task: SessionTask) { record("cancelled", task) }
        func task(_ task: SessionTask, willRedirectWith response: HTTPURLResponse, to request: URLRequest) {
            record("redirected", task)
        }
        func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse) { record("response", task) }
        func task(_ task: SessionTask, didReceiveData data: Data) {
            received.withLock { $0[task.taskIdentifier, default: 0] += data.count }
            record("data", task)
        }
        func task(
            _ task: SessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            sent.withLock { $0[task.taskIdentifier] = totalBytesSent }
            record("sent", task)
        }
        func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
            self.metrics.withLock { $0[task.taskIdentifier] = metrics }
            record("completed", task)
        }
        func task(_ task: SessionTask, didSerializeResponse result: Result<(any Sendable)?, any Error>) {
            record("serialized", task)
        }
        func sessionDidBecomeInvalid(error: (any Error)?) { record("invalid", nil) }

        /// Waits until everything queued for the monitor so far has run.
        func drain() async {
            guard let queue else { return }
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        }
    }

    private static func complete(_ make: (@escaping TaskCompletionHandler) -> SessionTask) async throws -> (
        SessionTask, (any Error)?
    ) {
        let box = Locked<SessionTask?>(nil)
        let error: (any Error)? = await withCheckedContinuation { continuation in
            let task = make { _, _, error in continuation.resume(returning: error) }
            box.withLock { $0 = task }
            task.resume()
        }
        return (try #require(box.value), error)
    }

    @Test(
        "Each event of an upload, a redirected GET and a cancelled task reaches a monitor once",
        arguments: TestTransports.names)
    func eventsAreCountedOnce(transport name: String) async throws {
        let base = try await HTTPBin.shared.url()
        let monitor = RecordingMonitor()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        let manager = SessionManager(configuration: configuration, transport: TestTransports.make(name))
        let completionQueue = DispatchQueue(label: "EventMonitorTests.completion")
        manager.completionQueue = completionQueue
        manager.responseSerializer = HTTPResponseSerializer()
        let hookCompletions = Locked(0)
        manager.hooks.didComplete = { _, _ in hookCompletions.withLock { $0 += 1 } }
        let invalidNotifications = Locked(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .sessionDidInvalidate, object: manager, queue: nil
        ) { _ in invalidNotifications.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }

        var post = URLRequest(url: base.appendingPathComponent("post"))
        post.httpMethod = "POST"
        let body = Data(repeating: 7, count: 100_000)
        let (upload, uploadError) = try await Self.complete { handler in
            manager.uploadTask(with: post, from: body, completionHandler: handler)
        }
        #expect(uploadError == nil)

        let (redirected, redirectError) = try await Self.complete { handler in
            manager.dataTask(
                with: URLRequest(url: base.appendingPathComponent("redirect/2")), completionHandler: handler)
        }
        #expect(redirectError == nil)

        let hanging = manager.dataTask(
            with: URLRequest(url: base.appendingPathComponent("delay/10")), completionHandler: nil)
        hanging.resume()
        hanging.suspend()
        hanging.resume()
        hanging.cancel()
        hanging.cancel()  // a second cancel is no event

        await manager.invalidateAndWait(cancelingTasks: false)
        await withCheckedContinuation { continuation in completionQueue.async { continuation.resume() } }
        await monitor.drain()

        for task in [upload, redirected, hanging] {
            #expect(monitor.count("created", task) == 1)
            #expect(monitor.count("completed", task) == 1)
            #expect(monitor.count("serialized", task) == 1)
        }
        #expect(monitor.count("resumed", upload) == 1)
        #expect(monitor.count("sent", upload) >= 1)
        #expect(monitor.totalSent(upload) == 100_000)
        #expect(monitor.count("response", upload) == 1)
        #expect(monitor.bytesReceived(upload) == Int(upload.countOfBytesReceived))
        #expect(monitor.bytesReceived(upload) > 100_000)  // httpbin echoes the body
        #expect(monitor.metrics(upload)?.countOfBytesSent == 100_000)
        #expect(monitor.metrics(upload)?.exchangeCount == 1)

        #expect(monitor.count("redirected", redirected) == 2)
        #expect(monitor.count("response", redirected) == 1)
        #expect(monitor.metrics(redirected)?.redirectCount == 2)
        #expect(monitor.metrics(redirected)?.exchangeCount == 3)

        #expect(monitor.count("resumed", hanging) == 2)
        #expect(monitor.count("suspended", hanging) == 1)
        #expect(monitor.count("cancelled", hanging) == 1)
        #expect(monitor.count("response", hanging) == 0)

        #expect(monitor.count("invalid") == 1)
        #expect(monitor.entries.last == "invalid")
        #expect(hookCompletions.value == 3)
        #expect(invalidNotifications.value == 1)
        for task in [upload, redirected, hanging] {
            let own = monitor.entries.filter { $0.hasSuffix(" \(task.taskIdentifier)") }
            #expect(own.first == "created \(task.taskIdentifier)")
            #expect(Array(own.suffix(2)) == ["completed \(task.taskIdentifier)", "serialized \(task.taskIdentifier)"])
        }
        await manager.transport.shutdown()
    }

    @Test("An async call's collected exchange reports its head and whole body once", arguments: TestTransports.names)
    func collectedCallIsReported(transport name: String) async throws {
        let base = try await HTTPBin.shared.url()
        let monitor = RecordingMonitor()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        let manager = HTTPSessionManager(
            baseURL: base, configuration: configuration, transport: TestTransports.make(name))
        let response = try await manager.send("GET", "bytes/3000", serializer: HTTPResponseSerializer())
        #expect(response.data.count == 3000)
        await manager.invalidateAndWait(cancelingTasks: false)
        await monitor.drain()
        #expect(monitor.count("created") == 1)
        #expect(monitor.count("resumed") == 1)
        #expect(monitor.count("response") == 1)
        #expect(monitor.count("completed") == 1)
        #expect(monitor.count("serialized") == 1)
        #expect(monitor.count("invalid") == 1)
        #expect(monitor.count("data") >= 1)
        await manager.transport.shutdown()
    }
}
