import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An `async` call without a body or headers of its own goes out as its serializer's plain request, with no
/// `URLRequest` made (`HTTPRequestSerializer.plainRequest`), and its first exchange starts before the task's
/// bookkeeping; what goes out must be exactly what the usual path sends for the same request, on every transport.
@Suite(.timeLimit(.minutes(2)))
struct EarlyStartTests {
    static let transports = TestTransports.names

    struct Echo: Decodable, Sendable, Equatable {
        var args: JSON
        var headers: [String: String]
        var method: String
        var url: String
    }

    /// A manager on `transport` whose serializer and configuration add every kind of header the early path has to
    /// reproduce.
    func client(_ transport: String, cookies: Bool) async throws -> HTTPSessionManager {
        var configuration = SessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-Session": "s", "User-Agent": "overridden by the serializer's"]
        // A storage of its own, so that cookies set by tests running alongside (this one on the other transport)
        // cannot reach the comparison.
        configuration.cookieStore = cookies ? CookieJar() : nil
        let manager = HTTPSessionManager(
            baseURL: try await HTTPBin.shared.url(), configuration: configuration,
            transport: TestTransports.make(transport))
        var serializer = HTTPRequestSerializer()
        serializer.setValue("v1", forHTTPHeaderField: "x-lower-case")
        serializer.setValue("v2", forHTTPHeaderField: "X-Mixed-Case")
        serializer.timeoutInterval = 30
        manager.requestSerializer = serializer
        return manager
    }

    /// The same call through the usual path: a prepared `URLRequest`, which is never started early.
    func usual(_ client: HTTPSessionManager, _ method: String, _ path: String, parameters: Parameter?) async throws
        -> Echo
    {
        let request = try client.makeRequest(method: method, urlString: path, parameters: parameters, headers: [:])
        return try await client.send(request, serializer: DecodableResponseSerializer(Echo.self)).value
    }

    @Test(arguments: ["GET", "DELETE"], transports)
    func theEarlyPathSendsWhatTheUsualPathSends(method: String, transport: String) async throws {
        let client = try await client(transport, cookies: false)
        let parameters: Parameter = ["q": "a b", "list": [1, 2], "nested": ["k": "v"]]
        let early = try await client.send(method, "anything/x?y=1", parameters: parameters, as: Echo.self).value
        let usual = try await usual(client, method, "anything/x?y=1", parameters: parameters)
        #expect(early == usual)
        #expect(early.method == method)
        #expect(early.args["y"]?.stringValue == "1" && early.args["q"]?.stringValue == "a b")
        #expect(early.args["list[]"] == ["1", "2"])
        #expect(early.headers["X-Lower-Case"] == "v1" && early.headers["X-Mixed-Case"] == "v2")
        #expect(early.headers["X-Session"] == "s")
        #expect(early.headers["User-Agent"] == DefaultHeaders.userAgent)
    }

    @Test(arguments: transports)
    func storedCookiesGoOutOnTheEarlyPathToo(transport: String) async throws {
        let client = try await client(transport, cookies: true)
        let name = "early\(UInt32.random(in: 0...UInt32.max))"
        _ = try await client.get("cookies/set", parameters: [name: "1"], as: JSON.self)
        let early = try await client.get("anything", as: Echo.self).value
        let usual = try await usual(client, "GET", "anything", parameters: nil)
        #expect(early.headers["Cookie"] == "\(name)=1")
        #expect(early.headers["Cookie"] == usual.headers["Cookie"])
        var serializer = try #require(client.requestSerializer as? HTTPRequestSerializer)
        serializer.httpShouldHandleCookies = false
        client.requestSerializer = serializer
        let withoutCookies = try await client.get("anything", as: Echo.self).value
        #expect(withoutCookies.headers["Cookie"] == nil)
    }

    /// NIOTransport reuses AsyncHTTPClient's parsed request per method and URL; nothing else may carry over.
    @Test(arguments: transports)
    func repeatedCallsToOneURLCarryOnlyTheirOwnMethodHeadersAndBody(transport: String) async throws {
        let client = try await client(transport, cookies: false)
        for (index, method) in ["GET", "DELETE", "GET", "PATCH", "PATCH", "GET"].enumerated() {
            let headers: HTTPHeaderFields = index == 1 || index == 3 ? ["X-Once": "\(index)"] : [:]
            let parameters: Parameter? = index == 3 ? ["n": 3] : nil
            let echo = try await client.send(
                method, "anything/same", parameters: parameters, headers: headers, as: Echo.self
            ).value
            #expect(echo.method == method)
            #expect(echo.headers["X-Once"] == headers["X-Once"])
            #expect(echo.url.hasSuffix("/anything/same"))
            if method == "PATCH" {
                #expect(echo.headers["Content-Length"] == (index == 3 ? "3" : "0"))
            }
        }
    }

    @Test(arguments: transports)
    func theTaskReportsTheRequestItsExchangeSent(transport: String) async throws {
        let client = try await client(transport, cookies: false)
        let response = try await client.get("anything/report", parameters: ["a": "1"], as: Echo.self)
        #expect(response.request.url?.absoluteString == response.value.url)
        #expect(response.request.timeoutInterval == 30)
        #expect(response.request.value(forHTTPHeaderField: "X-Mixed-Case") == "v2")
        #expect(client.tasks.isEmpty)
    }

    /// Records the order in which the session started an exchange and announced the task's resume.
    final class OrderSpy: Transport {
        let base = NIOTransport()
        let order = Locked([String]())
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            order.withLock { $0.append("send") }
            return try await base.send(request)
        }
        func startCollecting(
            _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
        ) throws -> CollectedResponse? {
            order.withLock { $0.append("start") }
            return try base.startCollecting(request, cancellation: cancellation, activity: activity)
        }
        func shutdown() async { await base.shutdown() }
    }

    /// Adds a header, so the request must wait for it.
    struct Stamp: RequestAdapter {
        func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
            var request = request
            request.setValue("1", forHTTPHeaderField: "X-Stamp")
            return request
        }
    }

    @Test(
        "The first request goes out before the task's bookkeeping, unless an adapter or a stored response sees it first"
    )
    func theFirstRequestOverlapsTheBookkeeping() async throws {
        let base = try await HTTPBin.shared.url()
        func order(_ configure: (inout SessionConfiguration) -> Void) async throws -> [String] {
            let spy = OrderSpy()
            var configuration = SessionConfiguration.ephemeral
            configure(&configuration)
            let client = HTTPSessionManager(baseURL: base, configuration: configuration, transport: spy)
            // Without a notification queue the session posts `taskDidResume` as it announces the resume, on the
            // announcing thread.
            client.notificationQueue = nil
            let observer = NotificationCenter.default.addObserver(
                forName: .taskDidResume, object: nil, queue: nil
            ) { [spy] note in
                guard let task = note.object as? SessionTask, client.tasks.contains(task) else { return }
                spy.order.withLock { $0.append("resumed") }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            _ = try await client.get("get", parameters: ["a": "1"], as: JSON.self)
            await client.transport.shutdown()
            return spy.order.withLock { $0 }
        }
        #expect(try await order { _ in } == ["start", "resumed"])
        #expect(try await order { $0.interceptor = Interceptor(adapters: [Stamp()]) } == ["resumed", "start"])
        // A cache with nothing for the URL (the default one included) does not hold the request back; one with a
        // stored response to revalidate does, on either kind of cache.
        let url = try #require(URL(string: "get?a=1", relativeTo: base)?.absoluteURL)
        let stale = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["ETag": "\"a\"", "Cache-Control": "no-cache"]))
        for cache in [
            SessionConfiguration.memoryURLCache(capacity: 1 << 20),
            URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil),
        ] {
            #expect(try await order { $0.urlCache = cache } == ["start", "resumed"])
            cache.storeCachedResponse(
                CachedURLResponse(response: stale, data: Data("{}".utf8)), for: URLRequest(url: url))
            #expect(try await order { $0.urlCache = cache } == ["resumed", "start"])
        }
        #expect(try HTTPRequestSerializer().plainRequest(method: "POST", url: base, parameters: nil) == nil)
    }

    @Test(arguments: TestTransports.names)
    func aRefusedConnectionFailsTheCallWithTheRequestAttached(transport: String) async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let client = HTTPSessionManager(
            baseURL: refusing.baseURL, configuration: .ephemeral, transport: TestTransports.make(transport))
        let error = await thrownCourierError { try await client.get("refused", parameters: ["a": "1"], as: JSON.self) }
        #expect(error?.errorCode == -1004, "\(String(describing: error))")
        #expect(error?.context?.request?.url?.absoluteString == "http://127.0.0.1:\(port)/refused?a=1")
        #expect(client.tasks.isEmpty)
    }

    /// Keeps the tasks it is told about, without reading them.
    final class TaskKeeper: EventMonitor {
        let tasks = Locked([SessionTask]())
        var queue: DispatchQueue? { nil }
        func taskCreated(_ task: SessionTask) { tasks.withLock { $0.append(task) } }
    }

    @Test(
        "A plain async call makes its URLRequest only when asked, and then the one the usual path makes",
        arguments: transports)
    func theURLRequestIsMadeOnlyWhenAsked(transport name: String) async throws {
        let server = try await FaultServer.start(
            .respond(Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), close: false))
        let keeper = TaskKeeper()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [keeper]
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: configuration, transport: TestTransports.make(name))
        manager.requestSerializer = HTTPRequestSerializer()
        let response = try await manager.send(
            "GET", "x", parameters: ["q": "1"], serializer: HTTPResponseSerializer())
        await manager.invalidateAndWait(cancelingTasks: true)
        // Monitors hear of tasks on their own queue, which may still be on its way.
        try await waitUntil(timeout: .seconds(10)) { keeper.tasks.withLock { !$0.isEmpty } }
        let task = try #require(keeper.tasks.withLock { $0.first })
        #expect(task.mutable.withLock { $0.madeOriginal } == nil)

        let made = response.request
        #expect(task.mutable.withLock { $0.madeOriginal } != nil)
        let url = try #require(made.url)
        let usual = try HTTPRequestSerializer().request(method: "GET", url: url, parameters: nil)
        #expect(url.absoluteString.hasSuffix("/x?q=1"))
        #expect(made.httpMethod == usual.httpMethod)
        #expect(made.allHTTPHeaderFields == usual.allHTTPHeaderFields)
        #expect(task.originalRequest == made)
        #expect(task.currentRequest == made)
        await manager.transport.shutdown()
        try await server.stop()
    }

    /// Notes whether each task was made from a plain request (no `URLRequest` made to send it).
    final class PlainTaskMonitor: EventMonitor {
        let plain = Locked<[Bool]>([])
        func taskCreated(_ task: SessionTask) {
            let isPlain = if case .plain = task.requestSource { true } else { false }
            plain.withLock { $0.append(isPlain) }
        }
    }

    @Test("Every serializer built on HTTPRequestSerializer takes the plain path for GET, none for a body")
    func serializersBuiltOnTheHTTPOneTakeThePlainPath() async throws {
        let monitor = PlainTaskMonitor()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        let client = HTTPSessionManager(baseURL: try await HTTPBin.shared.url(), configuration: configuration)
        for serializer in [JSONRequestSerializer(), PropertyListRequestSerializer()] as [any RequestSerializer] {
            client.requestSerializer = serializer
            let echo = try await client.get("anything", parameters: ["q": "a b"], as: Echo.self).value
            #expect(echo.args["q"]?.stringValue == "a b")
            _ = try await client.post("anything", parameters: ["q": "a b"], as: JSON.self)
        }
        // A GET then a POST, twice: only the GETs are plain (a JSONRequestSerializer GET was not, before). Monitors
        // hear of tasks on their own queue, so the last creation may still be on its way.
        try await waitUntil(timeout: .seconds(10)) { monitor.plain.withLock { $0.count == 4 } }
        #expect(monitor.plain.withLock { $0 } == [true, false, true, false])
        client.invalidate(cancelingTasks: true)
    }

}
