import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Alamofire's conveniences, in Courier: `cURLDescription()`, a request-convertible protocol for routers, typed
/// header fields and a shared session for one-liners.
@Suite struct AlamofireParityTests {
    /// Runs `command` in `/bin/sh`, failing the test when it exits non-zero.
    private static func shell(_ command: String) async throws {
        let outcome = try await ChildProcess.shell(command + " --silent --output /dev/null")
        #expect(outcome.status == 0, "\(command)")
    }

    @Test("cURLDescription: curl running it sends what the session sends (its fields and cookies included)")
    func curlSendsTheSame() async throws {
        let server = try await ScriptedServer.start([.init(status: 200), .init(status: 200)])
        let jar = CookieJar()
        jar.storeCookies(fromSetCookieFields: ["sid=abc123; Path=/"], for: server.baseURL)
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieStore = jar
        configuration.httpAdditionalHeaders = ["X-Session": "one"]
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        var request = URLRequest(url: server.url("items?q=a%20b"))
        request.httpMethod = "PUT"
        request.setValue("it's \"quoted\" $HOME `x`", forHTTPHeaderField: "X-Quote")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"name":"Ada's"}"#.utf8)
        _ = try await manager.send(request, serializer: HTTPResponseSerializer())
        try await Self.shell(manager.cURLDescription(of: request))
        manager.invalidate(cancelingTasks: true)
        try await server.stop()

        let received = server.received
        #expect(received.count == 2)
        let (courier, curl) = (received[0], received[1])
        #expect(curl.method == courier.method && curl.path == courier.path)
        #expect(curl.bodySHA256 == courier.bodySHA256)
        for name in ["x-session", "cookie", "x-quote", "content-type", "user-agent", "accept", "accept-language"] {
            #expect(curl.headers[name] == courier.headers[name], "\(name)")
        }
        #expect(curl.headers["x-quote"] == "it's \"quoted\" $HOME `x`")
    }

    @Test("cURLDescription redacts secrets on request; a task's includes its session's fields")
    func redactionAndTasks() throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Session": "one"]
        configuration.credential = Credential(user: "ada", password: "pw-secret", schemes: [.digest])
        let manager = HTTPSessionManager(configuration: configuration)
        var request = URLRequest(url: try #require(URL(string: "https://user:url-secret@api.example.test/x")))
        request.setValue("Bearer token-secret", forHTTPHeaderField: "Authorization")
        request.setValue("a=cookie-secret", forHTTPHeaderField: "Cookie")
        let open = manager.cURLDescription(of: request)
        #expect(open.contains("token-secret") && open.contains("--digest --user 'ada:pw-secret'"))
        let hidden = manager.cURLDescription(of: request, redactingSecrets: true)
        for secret in ["token-secret", "cookie-secret", "pw-secret", "url-secret"] {
            #expect(!hidden.contains(secret), "\(secret): \(hidden)")
        }
        #expect(hidden.contains("'Authorization: REDACTED'"))
        let task = manager.dataTask(
            with: URLRequest(url: try #require(URL(string: "https://api.example.test/y"))), completionHandler: nil)
        #expect(task.cURLDescription().contains("'X-Session: one'"))
        #expect(
            URLRequest(url: try #require(URL(string: "https://a.test/"))).cURLDescription()
                == "curl \\\n\t--header 'Accept:' \\\n\t--header 'User-Agent:' \\\n\t'https://a.test/'")
        manager.invalidate(cancelingTasks: true)
    }

    /// A small router, as the migration article shows.
    enum API: URLRequestConvertible {
        case item(id: Int, base: URL)
        case broken

        func asURLRequest() throws -> URLRequest {
            switch self {
            case .item(let id, let base): return URLRequest(url: base.appendingPathComponent("items/\(id)"))
            case .broken: throw CocoaError(.fileNoSuchFile)
            }
        }
    }

    @Test("A URLRequestConvertible router, a URL string, typed header fields and the shared manager")
    func convertiblesAndHeaders() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("Content-Type", "application/json")], body: #"{"id":7}"#),
            .init(status: 200, body: "plain"),
        ])
        struct Item: Decodable, Sendable { var id: Int }
        let manager = HTTPSessionManager(configuration: .ephemeral)
        #expect(try await manager.send(API.item(id: 7, base: server.baseURL), as: Item.self).value.id == 7)
        #expect(server.received.first?.path == "/items/7")
        var request = URLRequest(url: server.url("plain"))
        let fields: HTTPHeaderFields = [
            .authorization(bearerToken: "t0k"), .accept("text/plain"), .userAgent("tests/1"),
            .authorization(username: "ada", password: "pw"),
        ]
        for field in fields { request.setValue(field.value, forHTTPHeaderField: field.name) }
        let plain = try await HTTPSessionManager.shared.send(request, serializer: HTTPResponseSerializer())
        #expect(plain.value == Data("plain".utf8))
        let headers = try #require(server.received.last?.headers)
        // A later field of the same name replaces an earlier one.
        #expect(headers["authorization"] == "Basic YWRhOnB3")
        #expect(headers["accept"] == "text/plain" && headers["user-agent"] == "tests/1")
        let error = await thrownCourierError { _ = try await manager.send(API.broken, as: Item.self) }
        #expect(error?.errorCode == -1 && error?.underlyingError is CocoaError)
        let badString = await thrownCourierError { _ = try await manager.send("not a url", as: Item.self) }
        #expect(badString?.errorCode == -1000)
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }
}

/// ``ClosureEventMonitor`` (Alamofire's): its closures see a task's events in order, on its queue.
@Suite struct ClosureEventMonitorTests {
    @Test("A GET's events reach the closures in order; a closure left out costs nothing")
    func eventsInOrder() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "hi")])
        let seen = Locked<[String]>([])
        let queue = DispatchQueue(label: "ClosureEventMonitorTests")
        let monitor = ClosureEventMonitor(
            queue: queue,
            taskCreated: { _ in seen.withLock { $0.append("created") } },
            taskDidReceiveResponse: { _, response in seen.withLock { $0.append("response \(response.statusCode)") } },
            taskDidReceiveData: { _, data in seen.withLock { $0.append("data \(data.count)") } },
            taskDidComplete: { _, metrics, error in
                seen.withLock { $0.append("complete \(metrics.transactionMetrics.count) \(error == nil)") }
            },
            taskDidSerializeResponse: { _, result in
                let bytes = (try? result.get()) as? Data
                seen.withLock { $0.append("serialized \(bytes?.count ?? -1)") }
            })
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        _ = try await manager.send("GET", "a", serializer: HTTPResponseSerializer())
        try await waitUntil { seen.value.count == 5 }
        #expect(seen.value == ["created", "response 200", "data 2", "complete 1 true", "serialized 2"])
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }
}
