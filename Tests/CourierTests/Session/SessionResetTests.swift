import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionManager/reset(cancelingTasks:)``: the session's cookies, cached responses and stored credentials are
/// gone, running tasks are cancelled when asked, and the manager serves the next request.
@Suite(.timeLimit(.minutes(1)))
struct SessionResetTests {
    @Test("Cookies, cached responses and stored credentials are emptied; the next request goes out without a cookie")
    func emptiesTheStores() async throws {
        let server = try await ScriptedServer.start { _, _ in
            .init(status: 200, headers: [("Set-Cookie", "sid=abc; Path=/"), ("Cache-Control", "max-age=600")])
        }
        let jar = CookieJar()
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let credentials = URLCredentialStorage()
        let space = URLProtectionSpace(
            host: "127.0.0.1", port: server.baseURL.port ?? 80, protocol: "http", realm: "r",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        credentials.set(URLCredential(user: "u", password: "p", persistence: .forSession), for: space)
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieStore = jar
        configuration.urlCache = cache
        // A response that sets a cookie is one user's: only a private cache keeps it.
        configuration.urlCacheIsShared = false
        configuration.urlCredentialStorage = credentials
        let manager = HTTPSessionManager(configuration: configuration, transport: NIOTransport())
        let first = server.url("first")
        _ = try await manager.send("GET", first.absoluteString, serializer: HTTPResponseSerializer())
        #expect(jar.cookies.count == 1)
        #expect(cache.cachedResponse(for: URLRequest(url: first)) != nil)

        await manager.reset()
        #expect(jar.cookies.isEmpty)
        #expect(cache.cachedResponse(for: URLRequest(url: first)) == nil)
        #expect(credentials.allCredentials.isEmpty)

        _ = try await manager.send("GET", server.url("second").absoluteString, serializer: HTTPResponseSerializer())
        let second = server.received.last
        #expect(second?.path == "/second")
        #expect(second?.headers["cookie"] == nil, "the reset jar still sent \(second?.headers["cookie"] ?? "")")
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test("cancelingTasks: running tasks have completed with -999 when reset returns", arguments: TestTransports.names)
    func cancelsRunningTasks(transport: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 200, delay: 30), .init(status: 200, body: "next")])
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
        let hanging = Task {
            try await manager.send("GET", server.url("hang").absoluteString, serializer: StringResponseSerializer())
        }
        try await waitUntil { server.received.count == 1 }
        let running = manager.tasks
        #expect(running.count == 1)
        await manager.reset(cancelingTasks: true)
        #expect(running.allSatisfy { $0.state == .completed })
        let error = await thrownCourierError { _ = try await hanging.value }
        #expect(error?.errorCode == -999)
        let next = try await manager.send(
            "GET", server.url("next").absoluteString, serializer: StringResponseSerializer())
        #expect(next.value == "next")
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test("FoundationCookieStore empties its storage")
    func foundationStore() throws {
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "courier-reset-\(UUID())")
        let store = FoundationCookieStore(storage)
        let url = try #require(URL(string: "http://example.com/"))
        store.storeCookies(fromSetCookieFields: ["a=1; Path=/", "b=2; Path=/"], for: url)
        #expect(storage.cookies?.count == 2)
        store.removeAllCookies()
        #expect(storage.cookies?.isEmpty ?? true)
        #expect(store.cookieField(for: url) == nil)
    }
}
