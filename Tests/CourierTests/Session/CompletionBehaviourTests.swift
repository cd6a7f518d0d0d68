import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking's completion behaviours: the parsed body together with the error for an unacceptable status, the
/// completion queue read when the task completes, and the session-did-become-invalid hook. On both transports.
@Suite struct CompletionBehaviourTests {
    static let problem = #"{"error":"invalid","id":7}"#

    private func problemServer() async throws -> FaultServer {
        let body = Self.problem
        return try await FaultServer.start(
            .respond(
                Data(
                    ("HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8), close: false))
    }

    @Test(
        "A 422 with a JSON body gives the completion handler both the parsed object and the error",
        arguments: TestTransports.names)
    func unacceptableStatusKeepsTheObject(transport name: String) async throws {
        let server = try await problemServer()
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(name))
        manager.completionQueue = DispatchQueue(label: "completion")
        let (object, error): ((any Sendable)?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.dataTask(with: URLRequest(url: server.baseURL)) { _, object, error in
                continuation.resume(returning: (object, error))
            }.resume()
        }
        let json = try #require(object as? JSON)
        #expect(json["error"]?.stringValue == "invalid")
        let courier = try #require(error as? CourierError)
        #expect(courier.errorCode == -1011)
        #expect((courier.serializedObject as? JSON)?["error"]?.stringValue == "invalid")
        #expect(courier.response?.statusCode == 422)
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test(
        "HTTPResponseSerializer: a 422's completion gets the body as its object beside the error, and so does the notification",
        arguments: TestTransports.names)
    func rawBodyOnFailure(transport name: String) async throws {
        let server = try await problemServer()
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(name))
        manager.completionQueue = DispatchQueue(label: "completion")
        manager.responseSerializer = HTTPResponseSerializer()
        let (object, error): ((any Sendable)?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.dataTask(with: URLRequest(url: server.baseURL)) { _, object, error in
                continuation.resume(returning: (object, error))
            }.resume()
        }
        #expect(object as? Data == Data(Self.problem.utf8))
        #expect((error as? CourierError)?.errorCode == -1011)
        let info = try await completionUserInfo(manager) {
            $0.dataTask(with: URLRequest(url: server.baseURL), completionHandler: nil)
        }
        #expect(info[SessionNotificationKey.serializedResponse] as? Data == Data(Self.problem.utf8))
        #expect((info[SessionNotificationKey.error] as? CourierError)?.errorCode == -1011)
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("An HTTPSessionManager failure block gets the error with the parsed object", arguments: TestTransports.names)
    func failureBlockKeepsTheObject(transport name: String) async throws {
        let server = try await problemServer()
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: .ephemeral, transport: TestTransports.make(name))
        manager.completionQueue = DispatchQueue(label: "completion")
        let error: (any Error)? = await withCheckedContinuation { continuation in
            _ = manager.get("x", success: { _, _ in continuation.resume(returning: nil) }) { _, error in
                continuation.resume(returning: error)
            }
        }
        let courier = try #require(error as? CourierError)
        #expect(courier.errorCode == -1011)
        #expect((courier.serializedObject as? JSON)?["id"]?.intValue == 7)
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("The completion queue and group are the ones set when the task completes", arguments: TestTransports.names)
    func completionQueueIsReadAtCompletion(transport name: String) async throws {
        let server = try await FaultServer.start(.slow(headAfter: 0.3))
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(name))
        manager.responseSerializer = HTTPResponseSerializer()
        let first = DispatchQueue(label: "first")
        let later = DispatchQueue(label: "later")
        let group = DispatchGroup()
        first.setSpecific(key: Self.queueName, value: "first")
        later.setSpecific(key: Self.queueName, value: "later")
        manager.completionQueue = first
        let (ranOnLater, insideGroup): (Bool, Bool) = await withCheckedContinuation { continuation in
            let task = manager.dataTask(with: URLRequest(url: server.baseURL)) { _, _, _ in
                // While the handler runs, the group has been entered and not yet left.
                continuation.resume(
                    returning: (
                        DispatchQueue.getSpecific(key: Self.queueName) == "later",
                        group.wait(timeout: .now()) == .timedOut
                    ))
            }
            task.resume()
            manager.completionQueue = later  // changed after the task was made and started
            manager.completionGroup = group
        }
        #expect(ranOnLater)
        #expect(insideGroup)
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    static let queueName = DispatchSpecificKey<String>()

    @Test("The session-invalid hook runs once, after the last task's completion", arguments: TestTransports.names)
    func invalidationHook(transport name: String) async throws {
        let server = try await FaultServer.start(.slow(headAfter: 0.2))
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(name))
        manager.completionQueue = DispatchQueue(label: "completion")
        let order = Locked([String]())
        manager.hooks.sessionDidBecomeInvalid = { _ in order.withLock { $0.append("invalid") } }
        manager.dataTask(with: URLRequest(url: server.baseURL)) { _, _, _ in
            order.withLock { $0.append("completed") }
        }.resume()
        await manager.invalidateAndWait(cancelingTasks: false)
        manager.invalidate(cancelingTasks: true)  // a second invalidation announces nothing more
        #expect(order.value == ["completed", "invalid"])
        await manager.transport.shutdown()
        try await server.stop()
    }

    /// Posts one request with a completion handler and returns the did-complete notification's user info.
    private func completionUserInfo(
        _ manager: SessionManager, _ makeTask: (SessionManager) -> SessionTask
    ) async throws -> [AnyHashable: Any] {
        let received = Locked<[AnyHashable: Any]?>(nil)
        let done = Outcome()
        let task = makeTask(manager)
        let observer = NotificationCenter.default.addObserver(forName: .taskDidComplete, object: task, queue: nil) {
            note in
            nonisolated(unsafe) let info = note.userInfo ?? [:]
            received.withLock { $0 = info }
            done.fulfill(nil)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        task.resume()
        _ = try await done.value()
        return try #require(received.withLock { $0 })
    }

    @Test(
        "The did-complete notification carries AFNetworking's keys: serializer, body, the object or the error, and the metrics",
        arguments: TestTransports.names)
    func completionNotificationUserInfo(transport name: String) async throws {
        let problem = try await problemServer()
        let good = try await FaultServer.start(
            .respond(
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}".utf8),
                close: false))
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(name))
        let success = try await completionUserInfo(manager) {
            $0.dataTask(with: URLRequest(url: good.baseURL), completionHandler: nil)
        }
        #expect(success[SessionNotificationKey.responseSerializer] is JSONResponseSerializer)
        #expect(success[SessionNotificationKey.responseData] as? Data == Data(#"{"a":1}"#.utf8))
        #expect((success[SessionNotificationKey.serializedResponse] as? JSON)?["a"]?.intValue == 1)
        #expect(success[SessionNotificationKey.error] == nil)
        let metrics = success[SessionNotificationKey.sessionTaskMetrics] as? TaskMetrics
        #expect(metrics?.transactionMetrics.first?.statusCode == 200)
        #expect(success.count == 4)

        // An unacceptable status: the error and the object parsed in spite of it, as AFNetworking posts both, and
        // the body.
        let failure = try await completionUserInfo(manager) {
            $0.dataTask(with: URLRequest(url: problem.baseURL), completionHandler: nil)
        }
        #expect((failure[SessionNotificationKey.error] as? CourierError)?.errorCode == -1011)
        #expect((failure[SessionNotificationKey.serializedResponse] as? JSON)?["id"]?.intValue == 7)
        #expect(failure[SessionNotificationKey.responseData] as? Data == Data(Self.problem.utf8))
        #expect(failure[SessionNotificationKey.sessionTaskMetrics] is TaskMetrics)
        #expect(failure.count == 5)

        // A download: the file's URL instead of the body.
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("info-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let download = try await completionUserInfo(manager) {
            $0.downloadTask(
                with: URLRequest(url: good.baseURL), destination: { _, _ in destination }, completionHandler: nil)
        }
        #expect(download[SessionNotificationKey.assetPath] as? URL == destination)
        #expect(download[SessionNotificationKey.responseData] == nil)
        #expect(download[SessionNotificationKey.serializedResponse] as? URL == destination)
        #expect(download[SessionNotificationKey.sessionTaskMetrics] is TaskMetrics)
        #expect(download.count == 4)

        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await problem.stop()
        try await good.stop()
    }
}
