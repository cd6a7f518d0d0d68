import Crypto
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``RetryPolicy`` and the session's interceptor steps against ``ScriptedServer``, on both transports.
@Suite(.timeLimit(.minutes(1)))
struct RetryTests {
    /// Records the retries a session announces.
    final class RetryRecorder: EventMonitor {
        let retries = Locked<[(Duration, Int)]>([])
        func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
            retries.withLock { $0.append((delay, error.errorCode)) }
        }
    }

    static func client(
        _ transport: String, interceptor: (any RequestInterceptor)? = RetryPolicy(), monitor: RetryRecorder? = nil
    ) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = interceptor
        configuration.eventMonitors = monitor.map { [$0] } ?? []
        return HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
    }

    @Test("503, 503, 200: three requests, 0.5 s then 1 s apart, and the 200's body", arguments: TestTransports.names)
    func retriesWithBackoff(transport: String) async throws {
        let server = try await ScriptedServer.start([
            .init(status: 503, body: "busy 1"), .init(status: 503, body: "busy 2"), .init(status: 200, body: "done"),
        ])
        let monitor = RetryRecorder()
        let client = Self.client(transport, monitor: monitor)
        let response = try await client.send(
            URLRequest(url: server.url("work")), serializer: StringResponseSerializer())
        #expect(response.value == "done")
        #expect(response.statusCode == 200)
        #expect(server.received.count == 3)
        // The delays asked for are checked exactly below; the gaps between arrivals prove they were waited. No upper
        // bound: at the start of the full suite, 2 cooperative threads shared by every test stretched them to 4 s
        // and more (0.50 s and 1.00 s alone).
        let gaps = server.gaps
        #expect(gaps.count == 2)
        #expect(gaps.first.map { $0 >= 0.5 } == true, "gaps \(gaps)")
        #expect(gaps.last.map { $0 >= 1.0 } == true, "gaps \(gaps)")
        try await waitUntil(timeout: .seconds(5)) { monitor.retries.withLock { $0.count } == 2 }
        #expect(monitor.retries.withLock { $0.map(\.0) } == [.milliseconds(500), .seconds(1)])
        #expect(monitor.retries.withLock { $0.map(\.1) } == [-1011, -1011])
        try await server.stop()
    }

    @Test(
        "A plain GET, whose exchange starts before its task is set up, is retried too", arguments: TestTransports.names)
    func retriesOnTheEarlyPath(transport: String) async throws {
        let server = try await ScriptedServer.start([
            .init(status: 503), .init(status: 502), .init(status: 200, body: "done"),
        ])
        let client = Self.client(transport, interceptor: RetryPolicy(exponentialBackoffScale: 0.01))
        let response = try await client.send(
            "GET", server.url("work").absoluteString, serializer: StringResponseSerializer())
        #expect(response.value == "done")
        #expect(server.received.count == 3)
        try await server.stop()
    }

    @Test("Past the limit the last failure stands, with its body")
    func givesUpAfterTheLimit() async throws {
        let server = try await ScriptedServer.start([.init(status: 503, body: "still busy")])
        let client = Self.client("NIOTransport", interceptor: RetryPolicy(exponentialBackoffScale: 0.01))
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: server.url("work")), serializer: StringResponseSerializer())
        }
        #expect(error?.response?.statusCode == 503)
        #expect(error?.responseData == Data("still busy".utf8))
        #expect(server.received.count == 3)
        try await server.stop()
    }

    @Test("POST and a 404 are not retried")
    func notRetried() async throws {
        let server = try await ScriptedServer.start([.init(status: 503)])
        let client = Self.client("NIOTransport")
        var post = URLRequest(url: server.url("work"))
        post.httpMethod = "POST"
        post.httpBody = Data("x".utf8)
        let postError = await thrownCourierError {
            _ = try await client.send(post, serializer: HTTPResponseSerializer())
        }
        #expect(postError?.response?.statusCode == 503)
        #expect(server.received.count == 1)
        try await server.stop()

        let missing = try await ScriptedServer.start([.init(status: 404)])
        let notFound = await thrownCourierError {
            _ = try await client.send(URLRequest(url: missing.url("gone")), serializer: HTTPResponseSerializer())
        }
        #expect(notFound?.response?.statusCode == 404)
        #expect(missing.received.count == 1)
        try await missing.stop()
    }

    @Test("A refused connection is retried, then fails with -1004", arguments: TestTransports.names)
    func refusedConnection(transport: String) async throws {
        let port = try RefusingPort()
        let monitor = RetryRecorder()
        let client = Self.client(
            transport, interceptor: RetryPolicy(exponentialBackoffScale: 0.05), monitor: monitor)
        let url = try #require(URL(string: "http://127.0.0.1:\(port.port)/"))
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: url), serializer: HTTPResponseSerializer())
        }
        #expect(error?.errorCode == -1004)
        try await waitUntil(timeout: .seconds(5)) { monitor.retries.withLock { $0.count } == 2 }
        #expect(monitor.retries.withLock { $0.map(\.1) } == [-1004, -1004])
    }

    @Test("Retry-After: 1 waits at least a second")
    func retryAfter() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 503, headers: [("Retry-After", "1")]), .init(status: 200, body: "ok"),
        ])
        let client = Self.client("NIOTransport")
        let response = try await client.send(
            URLRequest(url: server.url("work")), serializer: StringResponseSerializer())
        #expect(response.value == "ok")
        #expect(server.gaps.first.map { $0 >= 1.0 } == true, "gaps \(server.gaps)")
        try await server.stop()
    }

    @Test("Retry-After beyond the maximum is not waited for")
    func retryAfterTooLong() async throws {
        let server = try await ScriptedServer.start([.init(status: 503, headers: [("Retry-After", "3600")])])
        let client = Self.client("NIOTransport")
        let started = ContinuousClock.now
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: server.url("work")), serializer: HTTPResponseSerializer())
        }
        #expect(error?.response?.statusCode == 503)
        #expect(server.received.count == 1)
        #expect(ContinuousClock.now - started < .seconds(5))
        try await server.stop()
    }

    @Test("A retried multipart body arrives whole each time", arguments: TestTransports.names)
    func multipartBodyReplayed(transport: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 503), .init(status: 503), .init(status: 200)])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("retry-\(UUID().uuidString).bin")
        let bytes = TestBytes.random(count: 300_000, seed: 5)
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let client = Self.client(transport, interceptor: RetryPolicy(exponentialBackoffScale: 0.05))
        let multipart = try client.makeMultipartRequest(
            method: "PUT", urlString: server.url("upload").absoluteString
        ) { form in
            try form.append(fileURL: file, name: "file")
            form.append(Data("hello".utf8), name: "note")
        }
        _ = try await client.upload(multipart.urlRequest, body: multipart.body, serializer: HTTPResponseSerializer())
        let received = server.received
        #expect(received.count == 3)
        #expect(Set(received.map(\.bodySHA256)).count == 1)
        #expect(received.allSatisfy { $0.bodyCount > bytes.count })
        try await server.stop()
    }

    @Test("Cancelling during the delay ends the task at once with -999")
    func cancelledWhileWaiting() async throws {
        let server = try await ScriptedServer.start([.init(status: 503, headers: [("Retry-After", "30")])])
        let client = Self.client("NIOTransport")
        let task = Task {
            try await client.send(URLRequest(url: server.url("work")), serializer: HTTPResponseSerializer())
        }
        try await waitUntil(timeout: .seconds(5)) { server.received.count == 1 }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        task.cancel()
        let error = await thrownCourierError { _ = try await task.value }
        #expect(error?.errorCode == -999)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(server.received.count == 1)
        try await server.stop()
    }

    @Test("An adapter changes every request, also the retries; a per-request interceptor runs after the session's")
    func adapters() async throws {
        struct Header: RequestInterceptor {
            let name: String
            let value: String
            func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
                var request = request
                request.setValue(
                    [request.value(forHTTPHeaderField: name), "\(value)\(task.retryCount)"].compactMap { $0 }
                        .joined(separator: ","), forHTTPHeaderField: name)
                return request
            }
        }
        let server = try await FaultServer.start(
            .reply(close: false) { head in
                head.contains("X-Attempt: s1,r1")
                    ? FaultServer.ok("second")
                    : Data(
                        "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n".utf8)
            })
        let client = Self.client(
            "NIOTransport",
            interceptor: Interceptor(
                adapters: [Header(name: "X-Attempt", value: "s")],
                retriers: [RetryPolicy(exponentialBackoffScale: 0.01)]))
        let response = try await client.send(
            URLRequest(url: server.baseURL), serializer: StringResponseSerializer(),
            interceptor: Header(name: "X-Attempt", value: "r"))
        #expect(response.value == "second")
        let heads = server.requestHeads
        #expect(heads.count == 2)
        #expect(heads.first?.contains("X-Attempt: s0,r0") == true)
        try await server.stop()
    }

    @Test("An adapter's error fails the request without sending it")
    func adapterRefuses() async throws {
        struct Refusal: Error {}
        struct Refuse: RequestAdapter {
            func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest { throw Refusal() }
        }
        let server = try await FaultServer.start(.countingConnections)
        let client = Self.client("NIOTransport", interceptor: Interceptor(adapters: [Refuse()]))
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        }
        #expect(error?.underlyingError is Refusal)
        #expect(server.requestCount == 0)
        try await server.stop()
    }
}

/// The policy's decisions, without a network.
@Suite struct RetryPolicyTests {
    static let url = URL(string: "http://example.test/x")!

    static func response(_ status: Int, _ headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    static func failure(_ status: Int) -> CourierError {
        .unacceptableStatusCode(status, context: .init(), underlyingError: nil)
    }

    @Test func alamofireDefaults() {
        let policy = RetryPolicy()
        let get = URLRequest(url: Self.url)
        #expect(
            policy.delay(for: get, attempt: 0, error: Self.failure(503), response: Self.response(503))
                == .milliseconds(500))
        #expect(
            policy.delay(for: get, attempt: 1, error: Self.failure(500), response: Self.response(500)) == .seconds(1))
        #expect(policy.delay(for: get, attempt: 2, error: Self.failure(500), response: Self.response(500)) == nil)
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(
                policy.delay(for: get, attempt: 0, error: Self.failure(status), response: Self.response(status)) != nil)
        }
        for status in [400, 401, 404, 501] {
            #expect(
                policy.delay(for: get, attempt: 0, error: Self.failure(status), response: Self.response(status)) == nil)
        }
        for method in ["POST", "PATCH", "CONNECT"] {
            var request = get
            request.httpMethod = method
            #expect(
                policy.delay(for: request, attempt: 0, error: Self.failure(503), response: Self.response(503)) == nil)
        }
        let lost = CourierError.connectionLost(underlyingError: nil, context: .init())
        #expect(policy.delay(for: get, attempt: 0, error: lost, response: nil) == .milliseconds(500))
        // As in Alamofire, a connection lost after a 200's head (a download cut off) is retried too.
        #expect(policy.delay(for: get, attempt: 0, error: lost, response: Self.response(200)) == .milliseconds(500))
        let pin = CourierError.serverTrustEvaluationFailed(host: "h", reason: "pin")
        #expect(policy.delay(for: get, attempt: 0, error: pin, response: nil) == nil)
    }

    @Test func retryAfterSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(RetryPolicy.retryAfter(Self.response(503, ["Retry-After": "7"]), now: now) == .seconds(7))
        let date = "Mon, 12 Jan 1970 13:47:00 GMT"  // 1,000,020 s after the epoch
        #expect(RetryPolicy.retryAfter(Self.response(503, ["Retry-After": date]), now: now) == .seconds(20))
        #expect(RetryPolicy.retryAfter(Self.response(503, ["Retry-After": "soon"]), now: now) == nil)
        #expect(RetryPolicy.retryAfter(Self.response(503, ["Retry-After": "99999999999999999999999"]), now: now) != nil)
        let policy = RetryPolicy()
        let get = URLRequest(url: Self.url)
        #expect(
            policy.delay(
                for: get, attempt: 0, error: Self.failure(503), response: Self.response(503, ["Retry-After": "3"]))
                == .seconds(3))
        #expect(
            policy.delay(
                for: get, attempt: 0, error: Self.failure(503),
                response: Self.response(503, ["Retry-After": "99999999999999999999999"])) == nil)
    }

    @Test func jitterStaysWithinItsFraction() {
        let policy = RetryPolicy(jitter: 0.5)
        let get = URLRequest(url: Self.url)
        for _ in 0..<100 {
            let delay = policy.delay(for: get, attempt: 1, error: Self.failure(503), response: Self.response(503))
            #expect(delay.map { $0 >= .milliseconds(500) && $0 <= .milliseconds(1500) } == true)
        }
    }

    @Test func budgetLimitsRetries() {
        let budget = RetryBudget(ratio: 0.5, minimumRetries: 2, window: .seconds(60))
        #expect(budget.withdraw())
        #expect(budget.withdraw())
        #expect(!budget.withdraw())
        for _ in 0..<4 { budget.recordRequest() }
        #expect(budget.remaining == 2)
        #expect(budget.withdraw() && budget.withdraw())
        #expect(!budget.withdraw())
    }
}
