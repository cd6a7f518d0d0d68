import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``TaskHooks/eventMonitors``: monitors of one request hear its events alone, while the session's monitors still
/// hear every request's.
@Suite(.timeLimit(.minutes(1)))
struct TaskEventMonitorTests {
    /// The events a monitor heard, by task identifier.
    final class Heard: Sendable {
        let events = Locked<[(task: Int, event: String)]>([])

        var monitor: ClosureEventMonitor {
            ClosureEventMonitor(
                taskCreated: { task in self.note(task, "created") },
                taskResumed: { task in self.note(task, "resumed") },
                taskWillRedirect: { task, _, _ in self.note(task, "redirect") },
                taskDidReceiveResponse: { task, _ in self.note(task, "response") },
                taskDidComplete: { task, _, _ in self.note(task, "complete") },
                taskDidSerializeResponse: { task, _ in self.note(task, "serialized") })
        }

        func note(_ task: SessionTask, _ event: String) {
            events.withLock { $0.append((task.taskIdentifier, event)) }
        }

        func tasks() -> Set<Int> { Set(events.withLock { $0.map(\.task) }) }
        func names() -> [String] { events.withLock { $0.map(\.event) } }
    }

    @Test(
        "A request's monitor hears its events only; the session's hears both requests", arguments: TestTransports.names)
    func perRequestMonitor(transport: String) async throws {
        let server = try await ScriptedServer.start { _, received in
            received.path == "/start" ? .init(status: 302, headers: [("Location", "/end")]) : .init(status: 200)
        }
        let session = Heard()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [session.monitor]
        let manager = HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
        let own = Heard()
        var hooks = TaskHooks()
        hooks.eventMonitors = [own.monitor]
        _ = try await manager.send(
            URLRequest(url: server.url("start")), serializer: HTTPResponseSerializer(), hooks: hooks)
        _ = try await manager.send(URLRequest(url: server.url("other")), serializer: HTTPResponseSerializer())
        try await waitUntil {
            own.names().contains("serialized") && session.names().filter { $0 == "serialized" }.count == 2
        }
        #expect(own.tasks().count == 1, "the request's monitor heard another task")
        for event in ["created", "resumed", "redirect", "response", "complete", "serialized"] {
            #expect(own.names().contains(event), "the request's monitor missed \(event)")
        }
        #expect(session.tasks().count == 2)
        #expect(own.tasks().isSubset(of: session.tasks()))
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }
}
