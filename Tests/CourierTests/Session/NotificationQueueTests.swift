import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionManager/notificationQueue``: AFNetworking posts its task notifications on the main queue; so does
/// Courier by default, in order, and on the queue given, or at once on the changing thread without one.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct NotificationQueueTests {
    /// What an observer saw: each notification's name and whether it came on the queue being checked.
    final class Seen: Sendable {
        let entries = Locked<[(name: String, onQueue: Bool)]>([])
    }

    /// Runs one callback GET, observing its manager's notifications with `onQueue` telling where each came.
    static func observe(
        configure: (SessionManager) -> Void, onQueue: @escaping @Sendable () -> Bool
    ) async throws -> [(name: String, onQueue: Bool)] {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        manager.completionQueue = DispatchQueue(label: "NotificationQueueTests.completion")
        manager.responseSerializer = HTTPResponseSerializer()
        configure(manager)
        let seen = Seen()
        let names: [Notification.Name] = [.taskDidResume, .taskDidComplete]
        let observers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let task = note.object as? SessionTask,
                    task.taskDescription == manager.taskDescriptionForSessionTasks
                else { return }
                seen.entries.withLock { $0.append((note.name.rawValue, onQueue())) }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let done = Locked(false)
        manager.dataTask(with: URLRequest(url: server.url("get"))) { _, _, _ in done.withLock { $0 = true } }.resume()
        try await waitUntil { done.value && seen.entries.withLock { $0.count } == 2 }
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
        return seen.entries.withLock { $0 }
    }

    /// Marks the main queue. Not `Thread.isMainThread`: with an `async` main (as `swift test` has on Linux) the main
    /// thread has handed the main queue to one of Dispatch's threads.
    static let mainKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    static var onMainQueue: Bool {
        _ = mainKey
        return DispatchQueue.getSpecific(key: mainKey) == 1
    }

    @Test("By default on the main queue, resume before complete")
    func mainByDefault() async throws {
        _ = Self.mainKey
        let seen = try await Self.observe(configure: { _ in }, onQueue: { Self.onMainQueue })
        #expect(
            seen.map { $0.name } == [
                Notification.Name.taskDidResume.rawValue, Notification.Name.taskDidComplete.rawValue,
            ])
        #expect(seen.allSatisfy { $0.onQueue }, "posted off the main queue: \(seen)")
    }

    @Test("An async call's notifications are posted at once, off the main queue")
    func asyncCallsNeverWaitForMain() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: NIOTransport())
        let seen = Seen()
        let url = server.url("async-\(UUID().uuidString)")
        let observer = NotificationCenter.default.addObserver(forName: .taskDidComplete, object: nil, queue: nil) {
            note in
            guard let task = note.object as? SessionTask, task.originalRequest?.url == url else { return }
            seen.entries.withLock { $0.append((note.name.rawValue, Self.onMainQueue)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = try await manager.send(URLRequest(url: url), serializer: HTTPResponseSerializer())
        try await waitUntil { seen.entries.withLock { $0.count } == 1 }
        #expect(seen.entries.withLock { $0.first?.onQueue } == false, "an async call's notification went to main")
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test("On the queue given")
    func onTheGivenQueue() async throws {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "NotificationQueueTests.notifications")
        queue.setSpecific(key: key, value: 7)
        let seen = try await Self.observe(
            configure: { $0.notificationQueue = queue }, onQueue: { DispatchQueue.getSpecific(key: key) == 7 })
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { $0.onQueue }, "posted off the queue given: \(seen)")
    }

    @Test("Without a queue, on the thread of the change, never the main one")
    func atOnceWithoutAQueue() async throws {
        _ = Self.mainKey
        let seen = try await Self.observe(configure: { $0.notificationQueue = nil }, onQueue: { !Self.onMainQueue })
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { $0.onQueue }, "posted on the main queue: \(seen)")
    }
}
