import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A manager nobody keeps (AFNetworking's `[[AFHTTPSessionManager manager] GET:…]`): its running callback tasks keep
/// it alive until they complete, as a URLSession keeps its delegate; an idle one is freed at once, and
/// `invalidate(cancelingTasks:)` still ends it early.
@Suite struct ManagerLifetimeTests {
    /// Weakly holds what it is given.
    final class WeakBox: @unchecked Sendable {
        // @unchecked: `value` is only set in `init` and read after; the lock makes the reads safe anyway.
        private let lock = NSLock()
        private weak var held: AnyObject?
        init(_ object: AnyObject) { held = object }
        var isFreed: Bool { lock.withLock { held == nil } }
    }

    /// Starts a GET on a manager made here and released on return; the completion's outcome goes to `done`.
    private static func getOnAManagerNobodyKeeps(
        _ server: ScriptedServer, transport: any Transport,
        done: @escaping @Sendable (Result<Data?, any Error>) -> Void
    ) -> WeakBox {
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: .ephemeral, transport: transport)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "ManagerLifetimeTests")
        manager.get(
            "slow", parameters: nil, headers: HTTPHeaderFields(), progress: nil,
            success: { _, object in done(.success(object as? Data)) },
            failure: { _, error in done(.failure(error)) })
        return WeakBox(manager)
    }

    @Test(
        "A released manager's running GET completes; the manager is freed once it has", arguments: TestTransports.names)
    func runningTaskKeepsTheManager(transport name: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "made it", delay: 0.3)])
        let transport = TestTransports.make(name)
        let result: Result<Data?, any Error> = await withCheckedContinuation { continuation in
            let box = Self.getOnAManagerNobodyKeeps(server, transport: transport) { continuation.resume(returning: $0) }
            #expect(!box.isFreed, "the running task keeps the manager")
            Self.lastBox.withLock { $0 = box }
        }
        #expect(try result.get() == Data("made it".utf8))
        let box = try #require(Self.lastBox.withLock { $0 })
        try await waitUntil(timeout: .seconds(5)) { box.isFreed }
        await transport.shutdown()
        try await server.stop()
    }

    static let lastBox = Locked<WeakBox?>(nil)

    /// A manager made, used without a task, and released.
    private static func idleManagerReleased() -> WeakBox {
        let manager = HTTPSessionManager(configuration: .ephemeral)
        manager.completionQueue = DispatchQueue(label: "idle")
        return WeakBox(manager)
    }

    @Test("A manager with no running task is freed when released; invalidate still cancels a kept one")
    func idleManagerIsFreedAndInvalidateEndsEarly() async throws {
        #expect(Self.idleManagerReleased().isFreed)

        let server = try await ScriptedServer.start([.init(status: 200, body: "late", delay: 5)])
        let transport = NIOTransport()
        let outcome = Locked<Result<Data?, any Error>?>(nil)
        var manager: HTTPSessionManager? = HTTPSessionManager(
            baseURL: server.baseURL, configuration: .ephemeral, transport: transport)
        manager?.completionQueue = DispatchQueue(label: "ManagerLifetimeTests.invalidate")
        _ = manager?.get(
            "slow", parameters: nil, headers: HTTPHeaderFields(), progress: nil,
            success: { _, object in outcome.withLock { $0 = .success(object as? Data) } },
            failure: { _, error in outcome.withLock { $0 = .failure(error) } })
        let box = WeakBox(try #require(manager))
        try await waitUntil { server.received.count == 1 }
        manager?.invalidate(cancelingTasks: true)
        manager = nil
        try await waitUntil(timeout: .seconds(3)) { outcome.withLock { $0 } != nil }
        guard case .failure(let error) = outcome.withLock({ $0 }) else {
            Issue.record("the invalidated task succeeded")
            return
        }
        #expect((error as? CourierError)?.errorCode == -999)
        try await waitUntil(timeout: .seconds(3)) { box.isFreed }
        await transport.shutdown()
        try await server.stop()
    }
}

/// AFNetworking's `taskDescriptionForSessionTasks`: a factory's tasks carry their manager's, another manager's differ.
@Suite struct TaskDescriptionTests {
    @Test func factoryTasksCarryTheManagersDescription() throws {
        let first = SessionManager(configuration: .ephemeral)
        let second = SessionManager(configuration: .ephemeral)
        let url = try #require(URL(string: "http://127.0.0.1:9/"))
        let task = first.dataTask(with: URLRequest(url: url), completionHandler: nil)
        #expect(task.taskDescription == first.taskDescriptionForSessionTasks)
        #expect(first.taskDescriptionForSessionTasks != second.taskDescriptionForSessionTasks)
        #expect(first.taskDescriptionForSessionTasks == first.taskDescriptionForSessionTasks)
        task.taskDescription = "mine"
        #expect(task.taskDescription == "mine")
        first.invalidate(cancelingTasks: true)
        second.invalidate(cancelingTasks: true)
    }
}
