import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionTask/progress``: a Foundation `Progress` that moves with the body and acts on its task (AFNetworking's
/// `downloadProgressForTask:` and `uploadProgressForTask:`, `URLSessionTask.progress`).
@Suite(.timeLimit(.minutes(1)))
struct LiveProgressTests {
    /// Completes once with the task's error, or `nil`.
    final class Ending: Sendable {
        private let outcome = Locked<(calls: Int, error: (any Error)?)>((0, nil))
        var calls: Int { outcome.withLock { $0.calls } }
        var error: CourierError? { outcome.withLock { $0.error as? CourierError } }

        var handler: @Sendable (URLResponse?, Any?, (any Error)?) -> Void {
            { _, _, error in self.outcome.withLock { $0 = ($0.calls + 1, error) } }
        }
    }

    /// A callback data task on `kind` for the server's body, not resumed, and what its completion got.
    static func dataTask(_ server: FaultServer, _ kind: FaultTransportKind) -> (SessionManager, DataTask, Ending) {
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.responseSerializer = HTTPResponseSerializer()
        let ending = Ending()
        return (
            manager, manager.dataTask(with: URLRequest(url: server.baseURL), completionHandler: ending.handler), ending
        )
    }

    @Test("A dripping body: the Progress moves part-way, then ends complete", arguments: FaultTransportKind.all)
    func followsTheDownload(_ kind: FaultTransportKind) async throws {
        let server = try await FaultServer.start(.slowBody(bytes: 30, every: 0.03))
        let (manager, task, ending) = Self.dataTask(server, kind)
        let progress = task.progress
        #expect(progress === task.progress, "a second read made another Progress")
        task.resume()
        try await waitUntil { progress.completedUnitCount > 0 && progress.completedUnitCount < 30 }
        #expect(progress.totalUnitCount == 30)
        try await waitUntil { ending.calls == 1 }
        #expect(ending.error == nil)
        #expect(progress.completedUnitCount == 30)
        #expect(progress.fractionCompleted == 1)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test(
        "pause() suspends the task, resume() resumes it, cancel() cancels it (-999)", arguments: FaultTransportKind.all)
    func actsOnTheTask(_ kind: FaultTransportKind) async throws {
        let server = try await FaultServer.start(.slowBody(bytes: 1000, every: 0.02))
        let (manager, task, ending) = Self.dataTask(server, kind)
        task.resume()
        let progress = task.progress
        try await waitUntil { task.countOfBytesReceived > 0 }
        progress.pause()
        try await waitUntil { task.state == .suspended }
        progress.resume()
        try await waitUntil { task.state == .running }
        // Both at once: Foundation may run their handlers in either order; the task follows the last call.
        progress.pause()
        progress.resume()
        try await Task.sleep(for: .milliseconds(100))
        #expect(task.state == .running)
        let received = task.countOfBytesReceived
        try await waitUntil { task.countOfBytesReceived > received }
        progress.cancel()
        try await waitUntil { ending.calls == 1 }
        #expect(ending.error?.errorCode == -999)
        #expect(task.state == .completed)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("An upload task's Progress counts the request body's bytes", arguments: FaultTransportKind.all)
    func followsTheUpload(_ kind: FaultTransportKind) async throws {
        let server = try await ScriptedServer.start([.init(status: 200)])
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.responseSerializer = HTTPResponseSerializer()
        let ending = Ending()
        var post = URLRequest(url: server.url("upload"))
        post.httpMethod = "POST"
        let body = TestBytes.random(count: 200_000, seed: 3)
        let task = manager.uploadTask(with: post, from: body, completionHandler: ending.handler)
        let progress = task.progress
        task.resume()
        try await waitUntil { ending.calls == 1 }
        #expect(ending.error == nil)
        #expect(progress.totalUnitCount == 200_000)
        #expect(progress.completedUnitCount == 200_000)
        #expect(server.received.first?.bodyCount == 200_000)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }
}
