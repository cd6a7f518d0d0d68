import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``TaskHooks``: one request's redirect, caching and authentication in place of the session's (Alamofire's
/// per-request `redirect(using:)`, `cacheResponse(using:)`, `authenticate(with:)`), other requests untouched; on both
/// transports.
@Suite struct TaskHooksTests {
    /// `/old` redirects to `/new`; `/private` wants Basic `ada:pw`; anything else answers `ok` (cacheable).
    private func server() async throws -> ScriptedServer {
        try await ScriptedServer.start { _, received in
            switch received.path {
            case "/old": return .init(status: 302, headers: [("Location", "/new")], body: "")
            case "/private" where received.headers["authorization"] != "Basic YWRhOnB3":
                return .init(status: 401, headers: [("WWW-Authenticate", #"Basic realm="r""#)], body: "")
            default: return .init(status: 200, headers: [("Cache-Control", "max-age=60")], body: "ok \(received.path)")
            }
        }
    }

    @Test(
        "A request that follows no redirect, one with its own credential; the next request keeps the session's",
        arguments: TestTransports.names)
    func redirectAndCredential(transport name: String) async throws {
        let server = try await server()
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: .ephemeral, transport: TestTransports.make(name))
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        var noRedirect = TaskHooks()
        noRedirect.willPerformRedirection = { _, _, _ in nil }
        let stopped = try await manager.send(
            URLRequest(url: server.url("old")), serializer: serializer, hooks: noRedirect)
        #expect(stopped.statusCode == 302)
        let followed = try await manager.send(URLRequest(url: server.url("old")), serializer: serializer)
        #expect(followed.value == Data("ok /new".utf8))

        var withCredential = TaskHooks()
        withCredential.credential = Credential(user: "ada", password: "pw")
        let allowed = try await manager.send(
            URLRequest(url: server.url("private")), serializer: serializer, hooks: withCredential)
        #expect(allowed.value == Data("ok /private".utf8))
        let refused = try await manager.send(URLRequest(url: server.url("private")), serializer: serializer)
        #expect(refused.statusCode == 401)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("A request whose response is not to be cached; the next request's is")
    func caching() async throws {
        let server = try await server()
        var configuration = SessionConfiguration.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        var doNotCache = TaskHooks()
        doNotCache.willCacheResponse = { _, _ in nil }
        let serializer = HTTPResponseSerializer()
        _ = try await manager.send(URLRequest(url: server.url("a")), serializer: serializer, hooks: doNotCache)
        _ = try await manager.send(URLRequest(url: server.url("a")), serializer: serializer)
        #expect(server.received.count == 2, "the first response was not stored")
        _ = try await manager.send(URLRequest(url: server.url("a")), serializer: serializer)
        #expect(server.received.count == 2, "the second one was, and answered the third request")
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }
}
