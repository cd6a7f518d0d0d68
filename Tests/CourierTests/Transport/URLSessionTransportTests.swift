import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``URLSessionTransport`` against a real HTTP server, with every test also run on ``NIOTransport`` to prove that the
/// two behave alike.
@Suite struct URLSessionTransportTests {
    // MARK: Plain exchanges

    @Test(arguments: USTTransportKind.allCases)
    func getReturnsStatusHeadersAndBody(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let url = server.url("/hello")
            let response = try await transport.send(TransportRequest(method: "GET", url: url))
            #expect(response.statusCode == 200)
            #expect(response.headers["X-Courier-Test"] == "42")
            #expect(response.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(response.headers["Content-Length"] == "5")
            #expect(response.url == url)
            #expect(response.httpVersion == "HTTP/1.1")
            #expect(String(decoding: try await collect(response.body), as: UTF8.self) == "hello")
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func requestHeadersAndMethodReachTheServer(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let request = TransportRequest(
                method: "GET", url: server.url("/headers"), headers: ["X-Custom": "abc", "Accept": "text/plain"])
            let response = try await transport.send(request)
            let lines = String(decoding: try await collect(response.body), as: UTF8.self).split(separator: "\n")
            #expect(lines.first == "GET /headers")
            #expect(lines.contains("x-custom: abc"))
            #expect(lines.contains("accept: text/plain"))
            #expect(!lines.contains { $0.hasPrefix("cookie:") })
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: USTTransportKind.allCases)
    func headHasHeadersButNoBody(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let response = try await transport.send(TransportRequest(method: "HEAD", url: server.url("/hello")))
            #expect(response.statusCode == 200)
            #expect(response.headers["Content-Length"] == "5")
            #expect(try await collect(response.body).isEmpty)
            // The connection is still usable afterwards.
            let next = try await transport.send(TransportRequest(method: "GET", url: server.url("/hello")))
            #expect(try await collect(next.body) == Data("hello".utf8))
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func redirectIsReturnedNotFollowed(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/redirect")))
            #expect(response.statusCode == 302)
            #expect(response.headers["Location"] == "/hello")
            #expect(String(decoding: try await collect(response.body), as: UTF8.self) == "moved")
            #expect(server.requestCount(for: "/hello") == 0)
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func errorStatusIsAResponseNotAnError(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/status/404")))
            #expect(response.statusCode == 404)
            #expect(String(decoding: try await collect(response.body), as: UTF8.self) == "not found")
        }
    }

    // MARK: Request bodies

    @Test(arguments: USTTransportKind.allCases)
    func postEchoFromData(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let payload = TestBytes.periodic(count: 300_000) { UInt8(truncatingIfNeeded: $0 &* 7) }
            let progress = Locked<[Int64]>([])
            let request = TransportRequest(
                method: "POST", url: server.url("/echo"), headers: ["Content-Type": "application/octet-stream"],
                body: .data(payload), bodyProgress: { sent in progress.withLock { $0.append(sent) } })
            let response = try await transport.send(request)
            #expect(response.statusCode == 200)
            #expect(response.headers["X-Request-Content-Length"] == "300000")
            #expect(response.headers["X-Request-Transfer-Encoding"] == "none")
            let echoed = try await collect(response.body)
            #expect(echoed == payload)
            let reported = progress.value
            #expect(reported.last == Int64(payload.count))
            #expect(reported == reported.sorted())
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func postEchoFromFileSendsContentLengthAndReportsProgress(_ kind: USTTransportKind) async throws {
        let size = 3 * 1024 * 1024 + 17
        let payload = TestBytes.periodic(count: size, period: 253) { UInt8(truncatingIfNeeded: $0 % 253) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ust-upload-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServerAndTransport(kind) { server, transport in
            let progress = Locked<[Int64]>([])
            let request = TransportRequest(
                method: "POST", url: server.url("/echo"), body: try .file(file, chunkSize: 100_000),
                bodyProgress: { sent in progress.withLock { $0.append(sent) } })
            let response = try await transport.send(request)
            #expect(response.statusCode == 200)
            // Sent with its length, not chunked.
            #expect(response.headers["X-Request-Content-Length"] == String(size))
            #expect(response.headers["X-Request-Transfer-Encoding"] == "none")
            let echoed = try await collect(response.body)
            #expect(echoed.count == size)
            #expect(echoed == payload)
            let reported = progress.value
            #expect(reported.last == Int64(size))
            #expect(reported.count > 1)
            #expect(reported == reported.sorted())
            if let urlSession = transport as? URLSessionTransport {
                // The body went through one temporary file, deleted when the task completed.
                let statistics = urlSession.delegate.statistics.value
                #expect(statistics.uploadFileCount == 1)
                let file = try #require(statistics.lastUploadFile)
                #expect(!FileManager.default.fileExists(atPath: file.path))
            }
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func interimContinueIsSkipped(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let request = TransportRequest(
                method: "POST", url: server.url("/echo"), headers: ["Expect": "100-continue"],
                body: .data(Data("ping".utf8)))
            let response = try await transport.send(request)
            #expect(response.statusCode == 200)
            #expect(String(decoding: try await collect(response.body), as: UTF8.self) == "ping")
            #expect(server.continuesSent == 1)
            #if canImport(FoundationNetworking)
                // On Linux the `100 Continue` reaches the delegate as a response of its own.
                if let urlSession = transport as? URLSessionTransport {
                    #expect(urlSession.delegate.statistics.value.interimResponses == 1)
                }
            #endif
        }
    }

    // MARK: Response bodies

    @Test(arguments: USTTransportKind.allCases)
    func bigBodyArrivesByteExact(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/big")))
            #expect(response.statusCode == 200)
            var received = Data()
            var chunks = 0
            for try await chunk in response.body {
                received.append(chunk)
                chunks += 1
            }
            #expect(received.count == USTServer.bigBody.count)
            #expect(received == USTServer.bigBody)
            #expect(chunks > 1)
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func slowConsumerGetsEveryByteWithBoundedMemory(_ kind: USTTransportKind) async throws {
        var configuration = URLSessionTransport.Configuration()
        configuration.maximumBufferedBytes = 256 * 1024
        let transport: any Transport =
            kind == .urlSession ? URLSessionTransport(configuration: configuration) : kind.make()
        try await withServer { server in
            // The server paces the body, so the transfer is still running when the buffer fills up.
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/big-paced")))
            try await Task.sleep(for: .milliseconds(300))
            let received = try await collect(response.body)
            #expect(received.count == USTServer.bigBody.count)
            #expect(received == USTServer.bigBody)
            // Sent once: nothing restarted the request.
            #expect(server.requestCount(for: "/big-paced") == 1)
        }
        if let urlSession = transport as? URLSessionTransport {
            let statistics = urlSession.delegate.statistics.value
            #expect(statistics.peakBufferedBytes > 0)
            #if canImport(FoundationNetworking)
                // Memory never held more than the limit; the rest waited in the spill file.
                #expect(statistics.peakBufferedBytes <= configuration.maximumBufferedBytes)
                #expect(statistics.spilledBytes > 0)
                #expect(statistics.suspensions == 0)
            #else
                // The task was suspended; chunks already on their way when it was may still arrive.
                #expect(statistics.suspensions > 0)
                #expect(statistics.peakBufferedBytes < configuration.maximumBufferedBytes + 1024 * 1024)
            #endif
        }
        await transport.shutdown()
    }

    @Test func droppedBodyIsForgotten() async throws {
        let transport = URLSessionTransport()
        try await withServer { server in
            var response: TransportResponse? = try await transport.send(
                TransportRequest(method: "GET", url: server.url("/big")))
            #expect(response?.statusCode == 200)
            #expect(transport.delegate.taskCount == 1)
            response = nil
            let deadline = ContinuousClock.now + .seconds(5)
            while transport.delegate.taskCount > 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(transport.delegate.taskCount == 0)
        }
        await transport.shutdown()
    }

    // MARK: Failures

    @Test(arguments: USTTransportKind.allCases)
    func cancellingTheAwaitingTaskThrowsCancelled(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let url = server.url("/hang")
            let sending = Task { try await transport.send(TransportRequest(method: "GET", url: url)) }
            try await server.waitForRequest(to: "/hang")
            let start = ContinuousClock.now
            sending.cancel()
            let error = await thrownCourierError { _ = try await sending.value }
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(error?.errorCode == -999)
            #expect(isCancelled(error))
        }
    }

    @Test("A caller cancelled while its task waits to be made fails at once; the task is never sent")
    func cancelledWhileTheTaskWaitsToBeMade() async throws {
        let transport = URLSessionTransport()
        try await withServer { server in
            let hold = ControlQueueHold(transport)
            let sending = Task { try await transport.send(TransportRequest(method: "GET", url: server.url("/hello"))) }
            try await Task.sleep(for: .milliseconds(100))
            sending.cancel()
            let error = await thrownCourierError { _ = try await sending.value }
            #expect(!hold.wasReleased, "answered only once the queue was free")
            #expect(isCancelled(error))
            await hold.release()
            #expect(server.requestCount(for: "/hello") == 0)
            #expect(transport.delegate.taskCount == 0)
            let next = try await transport.send(TransportRequest(method: "GET", url: server.url("/hello")))
            #expect(try await collect(next.body) == Data("hello".utf8))
        }
        await transport.shutdown()
    }

    @Test("A session's timeout ends a request whose task waits to be made, on time")
    func timeoutWhileTheTaskWaitsToBeMade() async throws {
        let transport = URLSessionTransport()
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 0.5
        let manager = HTTPSessionManager(configuration: configuration, transport: transport)
        try await withServer { server in
            let hold = ControlQueueHold(transport)
            let error = await thrownCourierError {
                _ = try await manager.send(URLRequest(url: server.url("/hello")), serializer: HTTPResponseSerializer())
            }
            #expect(!hold.wasReleased, "answered only once the queue was free")
            #expect(error?.errorCode == -1001, "\(String(describing: error))")
            await hold.release()
            #expect(server.requestCount(for: "/hello") == 0)
            #expect(transport.delegate.taskCount == 0)
        }
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
    }

    @Test(arguments: USTTransportKind.allCases)
    func cancellingTheReadingTaskThrowsCancelled(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/drip")))
            #expect(response.statusCode == 200)
            let firstChunk = Locked<Data?>(nil)
            let reading = Task {
                var iterator = response.body.makeAsyncIterator()
                firstChunk.withLock { $0 = Data() }
                while let chunk = try await iterator.next() {
                    firstChunk.withLock { $0?.append(chunk) }
                }
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while firstChunk.value != Data("start".utf8) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(firstChunk.value == Data("start".utf8))
            reading.cancel()
            let error = await thrownCourierError { try await reading.value }
            #expect(error?.errorCode == -999)
            #expect(isCancelled(error))
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func connectionRefusedIsCannotConnect(_ kind: USTTransportKind) async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let transport = kind.make(connectTimeout: 2)
        let url = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/hello"))
        let error = await thrownCourierError { _ = try await transport.send(TransportRequest(method: "GET", url: url)) }
        await transport.shutdown()
        #expect(error?.errorCode == -1004)
        if case .cannotConnect(let host, _, _) = error {
            #expect(host == "127.0.0.1")
        } else {
            Issue.record("expected .cannotConnect, got \(String(describing: error))")
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func bodyCutShortIsConnectionLost(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            var received = Data()
            let error = await thrownCourierError {
                let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/truncated")))
                for try await chunk in response.body { received.append(chunk) }
            }
            #expect(error?.errorCode == -1005)
            #expect(received.count <= 5)
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func requestsAfterShutdownFail(_ kind: USTTransportKind) async throws {
        try await withServer { server in
            let transport = kind.make()
            let response = try await transport.send(TransportRequest(method: "GET", url: server.url("/hello")))
            #expect(try await collect(response.body) == Data("hello".utf8))
            await transport.shutdown()
            await transport.shutdown()  // twice is harmless
            let error = await thrownCourierError {
                _ = try await transport.send(TransportRequest(method: "GET", url: server.url("/hello")))
            }
            #expect(error != nil)
            #expect(server.requestCount(for: "/hello") == 1)
        }
    }

    @Test(arguments: USTTransportKind.allCases)
    func alreadyCancelledTaskSendsNothing(_ kind: USTTransportKind) async throws {
        try await withServerAndTransport(kind) { server, transport in
            let url = server.url("/hello")
            let sendFromCancelledTask = {
                let sending = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await transport.send(TransportRequest(method: "GET", url: url))
                }
                let error = await thrownCourierError { _ = try await sending.value }
                #expect(error?.errorCode == -999)
                #expect(server.requestCount(for: "/hello") == 0)
            }
            // AsyncHTTPClient alone sent such a request about 1 run in 15; NIOTransport now checks first.
            for _ in 0..<20 { await sendFromCancelledTask() }
            // The transport still works.
            let response = try await transport.send(TransportRequest(method: "GET", url: url))
            #expect(try await collect(response.body) == Data("hello".utf8))
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: USTTransportKind.allCases)
    func shutdownCancelsRunningExchanges(_ kind: USTTransportKind) async throws {
        try await withServer { server in
            let transport = kind.make()
            let url = server.url("/hang")
            let sending = Task { try await transport.send(TransportRequest(method: "GET", url: url)) }
            try await server.waitForRequest(to: "/hang")
            await transport.shutdown()
            let error = await thrownCourierError { _ = try await sending.value }
            #expect(error?.errorCode == -999)
        }
    }

    @Test func errorMapping() throws {
        let url = try #require(URL(string: "http://example.com/x"))
        func code(_ code: URLError.Code) -> Int {
            URLSessionTransport.courierError(URLError(code), url: url).errorCode
        }
        #expect(code(.timedOut) == -1001)
        #expect(code(.cannotConnectToHost) == -1004)
        #expect(code(.cannotFindHost) == -1004)
        #expect(code(.networkConnectionLost) == -1005)
        #expect(code(.badServerResponse) == -1011)
        #expect(code(.cancelled) == -999)
        // For a URL that passes Courier's check, libcurl's "unsupported" is about the response's status line.
        #expect(code(.unsupportedURL) == -1011)
        #expect(
            URLSessionTransport.courierError(URLError(.unsupportedURL), url: try #require(URL(string: "ftp://h/")))
                .errorCode == -1000)
        #expect(code(.cannotDecodeRawData) == -1011)
        // Linux reports these libcurl failures with messages only.
        func linux(_ code: URLError.Code, _ message: String) -> Int {
            let error = NSError(
                domain: NSURLErrorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
            return URLSessionTransport.courierError(error, url: url).errorCode
        }
        #expect(linux(.unknown, "transfer closed with 95 bytes remaining to read") == -1005)
        #expect(linux(.unknown, "transfer closed with outstanding read data remaining") == -1005)
        #expect(linux(.unknown, "something else") == -1)
        #expect(linux(.unsupportedURL, "Received HTTP/0.9 when not allowed") == -1011)
        if case .cannotConnect(let host, _, _) = URLSessionTransport.courierError(URLError(.cannotFindHost), url: url) {
            #expect(host == "example.com")
        } else {
            Issue.record("expected .cannotConnect")
        }
    }

    // MARK: Helpers

    private func withServer(_ body: (USTServer) async throws -> Void) async throws {
        let server = try await USTServer.start()
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func withServerAndTransport(
        _ kind: USTTransportKind, _ body: (USTServer, any Transport) async throws -> Void
    ) async throws {
        let transport = kind.make()
        do {
            try await withServer { server in try await body(server, transport) }
        } catch {
            await transport.shutdown()
            throw error
        }
        await transport.shutdown()
    }

    private func collect(_ body: DataChunks) async throws -> Data {
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        return data
    }

    private func isCancelled(_ error: CourierError?) -> Bool {
        if case .cancelled = error { return true }
        return false
    }

}

/// The transports under test.
enum USTTransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession = "URLSessionTransport"
    case nio = "NIOTransport"

    var testDescription: String { rawValue }

    func make(connectTimeout: TimeInterval = 10) -> any Transport {
        switch self {
        case .urlSession:
            return URLSessionTransport()
        case .nio:
            var configuration = NIOTransport.Configuration()
            configuration.connectTimeout = connectTimeout
            return NIOTransport(configuration: configuration)
        }
    }
}

// MARK: - Server

/// A tiny HTTP/1.1 server on 127.0.0.1 for these tests only.
///
/// - `GET /hello`: 200 `hello`, `X-Courier-Test: 42`.
/// - `GET /headers`: the request line and headers, lower-cased, one per line.
/// - `GET /big`: ``bigBody`` (5 MiB); `GET /big-paced`: the same, 64 KiB every 5 ms.
/// - `POST /echo`: the body back, with `X-Request-Content-Length` and `X-Request-Transfer-Encoding` (or `none`);
///   an `Expect: 100-continue` is answered with `100 Continue` first.
/// - `GET /redirect`: 302 to `/hello`, body `moved`.
/// - `GET /status/404`: 404 `not found`.
/// - `GET /hang`: never answers.
/// - `GET /drip`: the head and `start`, then nothing more.
/// - `GET /truncated`: `Content-Length: 100`, 5 bytes, then the connection is closed.
private final class USTServer: Sendable {
    struct Record {
        var requests: [String] = []
        var continues = 0
        var children: [any Channel] = []
    }

    /// Made from a repeated 251-byte pattern: a closure per byte takes seconds in a debug build, and this is first
    /// read on an event loop, which it would block (with the other loop waiting on the same lazy initialization).
    static let bigBody: Data = {
        let pattern = Data((0..<251).map { UInt8($0) })
        var body = Data(capacity: 5 * 1024 * 1024 + pattern.count)
        while body.count < 5 * 1024 * 1024 { body.append(pattern) }
        return body.prefix(5 * 1024 * 1024)
    }()

    let port: Int
    private let channel: any Channel
    let record: Locked<Record>

    private init(channel: any Channel, port: Int, record: Locked<Record>) {
        self.channel = channel
        self.port = port
        self.record = record
    }

    static func start() async throws -> USTServer {
        let record = Locked(Record())
        let channel = try await ServerBootstrap(group: LoopbackServer.group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                record.withLock { $0.children.append(channel) }
                return channel.eventLoop.makeCompletedFuture(withResultOf: {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(USTHandler(record: record))
                })
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw USTServerError.noPort }
        return USTServer(channel: channel, port: port, record: record)
    }

    /// A port nothing listens on: bound, then closed.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    func requestCount(for path: String) -> Int {
        record.withLock { $0.requests.filter { $0 == path }.count }
    }

    var continuesSent: Int { record.withLock { $0.continues } }

    /// Waits until a request for `path` has arrived (a precondition of the tests, not what they measure).
    func waitForRequest(to path: String) async throws {
        // Generous: on Linux every URLSession of the process waits on one FoundationNetworking queue, which other
        // suites' 10,000-field heads keep busy for seconds (see URLSessionTransport).
        let deadline = ContinuousClock.now + .seconds(30)
        while requestCount(for: path) == 0 {
            guard ContinuousClock.now < deadline else { throw USTServerError.noRequest(path) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func stop() async {
        try? await channel.close()
        for child in record.withLock({ $0.children }) { try? await child.close() }
    }
}

/// Holds a ``URLSessionTransport``'s control queue, as a FoundationNetworking work queue busy with another session's
/// long head holds it (see ``URLSessionTransport``), for at most 10 s: a transport that waited for it would still end.
private final class ControlQueueHold: Sendable {
    private let transport: URLSessionTransport
    private let gate = DispatchSemaphore(value: 0)
    private let released = Locked(false)
    private let releaser: Task<Void, Never>

    init(_ transport: URLSessionTransport) {
        self.transport = transport
        let (gate, released) = (gate, released)
        transport.delegate.control.async { gate.wait() }
        releaser = Task.detached {
            try? await Task.sleep(for: .seconds(10))
            released.withLock { $0 = true }
            gate.signal()
        }
    }

    /// Whether the queue was let go (by ``release()`` or after 10 s).
    var wasReleased: Bool { released.value }

    /// Lets the queue go and returns once everything queued on it meanwhile has run.
    func release() async {
        releaser.cancel()
        await releaser.value
        await withCheckedContinuation { done in transport.delegate.control.async { done.resume() } }
    }
}

private enum USTServerError: Error {
    case noPort
    case noRequest(String)
}

private final class USTHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let record: Locked<USTServer.Record>
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(record: Locked<USTServer.Record>) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            record.withLock { $0.requests.append(head.uri) }
            if head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                record.withLock { $0.continues += 1 }
                context.writeAndFlush(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        switch (head.method, head.uri) {
        case (.GET, "/hello"):
            send(
                context, .ok, ["Content-Type": "text/plain; charset=utf-8", "X-Courier-Test": "42"], Data("hello".utf8))
        case (.HEAD, "/hello"):
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Content-Length", value: "5")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case (.GET, "/headers"):
            var lines = ["\(head.method.rawValue) \(head.uri)"]
            for (name, value) in head.headers { lines.append("\(name.lowercased()): \(value)") }
            send(context, .ok, ["Content-Type": "text/plain"], Data(lines.joined(separator: "\n").utf8))
        case (.GET, "/big"):
            send(context, .ok, ["Content-Type": "application/octet-stream"], USTServer.bigBody)
        case (.GET, "/big-paced"):
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Content-Length", value: String(USTServer.bigBody.count))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            writePaced(context, from: 0)
        case (.POST, "/echo"):
            let headers = [
                "X-Request-Content-Length": head.headers["content-length"].first ?? "none",
                "X-Request-Transfer-Encoding": head.headers["transfer-encoding"].first ?? "none",
            ]
            send(context, .ok, headers, Data(body.readableBytesView))
        case (.GET, "/redirect"):
            send(context, .found, ["Location": "/hello"], Data("moved".utf8))
        case (.GET, "/status/404"):
            send(context, .notFound, [:], Data("not found".utf8))
        case (.GET, "/hang"):
            break
        case (.GET, "/truncated"):
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Content-Length", value: "100")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "hello")))), promise: nil)
            context.close(promise: nil)

        case (.GET, "/drip"):
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Content-Length", value: "1000")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "start")))), promise: nil)
        default:
            send(context, .notFound, [:], Data())
        }
    }

    /// Writes ``USTServer/bigBody`` 64 KiB every 5 ms.
    private func writePaced(_ context: ChannelHandlerContext, from offset: Int) {
        guard context.channel.isActive else { return }
        let body = USTServer.bigBody
        let end = min(offset + 64 * 1024, body.count)
        let buffer = context.channel.allocator.buffer(bytes: body[offset..<end])
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        guard end < body.count else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(5)) {
            self.writePaced(context, from: end)
        }
    }

    private func send(
        _ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ fields: [String: String], _ body: Data
    ) {
        var headers = NIOHTTP1.HTTPHeaders()
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(body.count))
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        var offset = 0
        while offset < body.count {
            let end = min(offset + 64 * 1024, body.count)
            let buffer = context.channel.allocator.buffer(bytes: body[offset..<end])
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            offset = end
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
