import CourierHTTPTypes
import CourierOpenAPI
import Crypto
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``CourierClientTransport`` driven as generated code drives it: requests made of a method, a path with a
/// percent-encoded query, `HTTPFields` and an `HTTPBody`, with no scheme or authority, against httpbin and the NIO
/// test servers.
@Suite(.timeLimit(.minutes(2)))
struct OpenAPIClientTransportTests {
    /// A request as generated code makes one (`HTTPRequest(soar_path:method:)`): only a path.
    static func request(_ method: HTTPRequest.Method, _ path: String, fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(soar_path: path, method: method, headerFields: fields)
    }

    static func json(_ body: HTTPBody?) async throws -> [String: Any] {
        let body = try #require(body)
        let data = try await Data(collecting: body, upTo: 4 << 20)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// httpbin's `/anything`, without a trailing `/`: the request's path is appended to it.
    static func anything() async throws -> URL {
        try await HTTPBin.url("anything")
    }

    @Test(arguments: [HTTPRequest.Method.get, .post, .put, .delete, .patch])
    func methodPathQueryHeadersAndBodyReachTheServer(method: HTTPRequest.Method) async throws {
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        var fields: HTTPFields = [.accept: "application/json"]
        fields[try #require(HTTPField.Name("X-Trace-Token"))] = "r-42"
        let hasBody = method != .get && method != .delete
        var body: HTTPBody?
        if hasBody {
            fields[.contentType] = "application/json"
            body = HTTPBody(#"{"name":"Fluffy"}"#)
        }
        let (response, responseBody) = try await transport.send(
            Self.request(method, "/pets/a%20b?name=x%20y&tag=a%2Bb&tag=c", fields: fields), body: body,
            baseURL: try await Self.anything(), operationID: "op")
        #expect(response.status == .ok)
        let echo = try await Self.json(responseBody)
        #expect(echo["method"] as? String == method.rawValue)
        #expect((echo["url"] as? String)?.hasSuffix("/anything/pets/a%20b?name=x%20y&tag=a%2Bb&tag=c") == true)
        let args = try #require(echo["args"] as? [String: Any])
        #expect(args["name"] as? String == "x y")
        #expect(args["tag"] as? [String] == ["a+b", "c"])
        let headers = try #require(echo["headers"] as? [String: String])
        #expect(headers["X-Trace-Token"] == "r-42")
        #expect(echo["data"] as? String == (hasBody ? #"{"name":"Fluffy"}"# : ""))
    }

    @Test func thePathAndQueryAreSentExactlyAsGiven() async throws {
        // The server answers with the request line it read, byte for byte.
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                // Swift reads "\r\n" as one Character: split on the string.
                let line = head.components(separatedBy: "\r\n").first ?? ""
                return Data("HTTP/1.1 200 OK\r\nContent-Length: \(line.utf8.count)\r\n\r\n\(line)".utf8)
            })
        defer { Task { try await server.stop() } }
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let base = server.baseURL.appendingPathComponent("api")
        let (_, body) = try await transport.send(
            Self.request(.get, "/a%2Fb/%E2%9C%93?q=%25&r=a%20b&s=%2B"), body: nil, baseURL: base, operationID: "op")
        let line = try await String(collecting: try #require(body), upTo: 1 << 16)
        #expect(line == "GET /api/a%2Fb/%E2%9C%93?q=%25&r=a%20b&s=%2B HTTP/1.1")
    }

    /// `count` chunks of 64 KiB, made one at a time as they are asked for.
    struct GeneratedChunks: AsyncSequence, Sendable {
        typealias Element = HTTPBody.ByteChunk
        static let chunk = HTTPBody.ByteChunk(
            TestBytes.periodic(count: 64 * 1024) { UInt8(truncatingIfNeeded: $0 &* 7) })
        let count: Int

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: count) }

        struct AsyncIterator: AsyncIteratorProtocol {
            var remaining: Int
            mutating func next() async -> HTTPBody.ByteChunk? {
                guard remaining > 0 else { return nil }
                remaining -= 1
                return GeneratedChunks.chunk
            }
        }

        var sha256: String {
            var hash = SHA256()
            for _ in 0..<count { GeneratedChunks.chunk.withUnsafeBytes { hash.update(bufferPointer: $0) } }
            return hash.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }

    @Test(arguments: [false, true])
    func aStreamedRequestBodyOfSeveralMiBArrivesWhole(lengthKnown: Bool) async throws {
        let server = try await ScriptedServer.start([ScriptedServer.Reply(status: 201, body: "stored")])
        defer { Task { try await server.stop() } }
        let chunks = GeneratedChunks(count: 80)  // 5 MiB
        let total = Int64(chunks.count * GeneratedChunks.chunk.count)
        let body = HTTPBody(chunks, length: lengthKnown ? .known(total) : .unknown, iterationBehavior: .single)
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, responseBody) = try await transport.send(
            Self.request(.post, "/upload", fields: [.contentType: "application/octet-stream"]), body: body,
            baseURL: server.baseURL, operationID: "upload")
        #expect(response.status.code == 201)
        #expect(try await String(collecting: try #require(responseBody), upTo: 1024) == "stored")
        let received = try #require(server.received.first)
        #expect(received.method == "POST")
        #expect(received.path == "/upload")
        #expect(Int64(received.bodyCount) == total)
        #expect(received.bodySHA256 == chunks.sha256)
        if lengthKnown {
            #expect(received.headers["content-length"] == String(total))
            #expect(received.headers["transfer-encoding"] == nil)
        } else {
            #expect(received.headers["transfer-encoding"] == "chunked")
            #expect(received.headers["content-length"] == nil)
        }
    }

    @Test func aStreamedResponseBodyIsReadChunkByChunkAsItArrives() async throws {
        let server = try await FaultServer.start(.slowBody(bytes: 6, every: 0.1))
        defer { Task { try await server.stop() } }
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, body) = try await transport.send(
            Self.request(.get, "/drip"), body: nil, baseURL: server.baseURL, operationID: "drip")
        #expect(response.status == .ok)
        let stream = try #require(body)
        #expect(stream.length == .known(6))
        var chunks: [[UInt8]] = []
        for try await chunk in stream { chunks.append(Array(chunk)) }
        // One byte is written every 0.1 s: a body handed over only at its end would be one chunk. More than one is
        // what shows streaming; how many depends on how reads coalesce (a fresh-clone CI run alone saw 2).
        #expect(chunks.count >= 2)
        #expect(chunks.flatMap { $0 } == FaultServer.body(0..<6))
    }

    @Test func aChunkedResponseFromHTTPBinHasNoKnownLengthAndArrivesWhole() async throws {
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, body) = try await transport.send(
            Self.request(.get, "/stream-bytes/100000?chunk_size=4096&seed=7"), body: nil,
            baseURL: try await HTTPBin.shared.url(), operationID: "bytes")
        #expect(response.status == .ok)
        let stream = try #require(body)
        #expect(stream.length == .unknown)
        var count = 0
        var chunkCount = 0
        for try await chunk in stream {
            count += chunk.count
            chunkCount += 1
        }
        #expect(count == 100_000)  // httpbin's largest
        #expect(chunkCount > 1)
    }

    @Test(arguments: [404, 500])
    func anErrorStatusIsAResponseNotAnError(status: Int) async throws {
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, body) = try await transport.send(
            Self.request(.get, "/status/\(status)"), body: nil, baseURL: try await HTTPBin.shared.url(),
            operationID: "status")
        #expect(response.status.code == status)
        _ = try await Data(collecting: try #require(body), upTo: 1 << 20)
    }

    @Test func aHeadResponseHasNoBody() async throws {
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, body) = try await transport.send(
            Self.request(.head, "/get"), body: nil, baseURL: try await HTTPBin.shared.url(), operationID: "head")
        #expect(response.status == .ok)
        #expect(body == nil)
    }

    @Test func repeatedResponseFieldsKeepTheirOrderAndCase() async throws {
        let server = try await FaultServer.start(
            .respond(
                Data(
                    ("HTTP/1.1 200 OK\r\nX-Zeta: 1\r\nset-cookie: a=1\r\nX-Alpha: 2\r\n"
                        + "Set-Cookie: b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT\r\nContent-Length: 2\r\n\r\nok").utf8),
                close: true))
        defer { Task { try await server.stop() } }
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let (response, body) = try await transport.send(
            Self.request(.get, "/"), body: nil, baseURL: server.baseURL, operationID: "cookies")
        #expect(
            response.headerFields.map(\.name.rawName) == [
                "X-Zeta", "set-cookie", "X-Alpha", "Set-Cookie", "Content-Length",
            ])
        #expect(response.headerFields[values: .setCookie] == ["a=1", "b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT"])
        #expect(try await String(collecting: try #require(body), upTo: 16) == "ok")
    }

    @Test func aRefusedConnectionIsThrownAsACourierError() async throws {
        let port = try RefusingPort()
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let error = await thrownCourierError {
            try await transport.send(Self.request(.get, "/x"), body: nil, baseURL: port.baseURL, operationID: "x")
        }
        #expect(error?.errorCode == -1004)
    }

    @Test func generatedCodeGetsTheCourierErrorInsideAClientError() async throws {
        let port = try RefusingPort()
        let client = UniversalClient(
            serverURL: port.baseURL,
            transport: CourierClientTransport(session: SessionManager(configuration: .ephemeral)))
        do {
            _ = try await client.send(
                input: "input", forOperation: "getPet",
                serializer: { _ in (Self.request(.get, "/pets/1"), nil) },
                deserializer: { response, _ in response.status.code })
            Issue.record("a refused connection returned a response")
        } catch let error as ClientError {
            #expect(error.operationID == "getPet")
            #expect((error.underlyingError as? CourierError)?.errorCode == -1004)
        }
    }

    @Test func aGeneratedOperationRunsThroughTheConverter() async throws {
        let client = UniversalClient(
            serverURL: try await Self.anything(),
            transport: CourierClientTransport(session: SessionManager(configuration: .ephemeral)))
        struct Pet: Codable, Sendable, Equatable { var name: String }
        let echoed: [String: String] = try await client.send(
            input: (id: "a b", limit: 3, pet: Pet(name: "Rex")), forOperation: "updatePet",
            serializer: { input in
                // As generated code builds a request: a rendered path, query items, accept and a JSON body.
                let path = try client.converter.renderedPath(template: "/pets/{}", parameters: [input.id])
                var request = HTTPRequest(soar_path: path, method: .put)
                try client.converter.setQueryItemAsURI(
                    in: &request, style: .form, explode: true, name: "limit", value: input.limit)
                request.headerFields[.accept] = "application/json"
                let body = try client.converter.setRequiredRequestBodyAsJSON(
                    input.pet, headerFields: &request.headerFields, contentType: "application/json; charset=utf-8")
                return (request, body)
            },
            deserializer: { response, body in
                #expect(response.status == .ok)
                let echo = try await Self.json(body)
                let args = echo["args"] as? [String: String]
                let json = echo["json"] as? [String: String]
                return [
                    "method": echo["method"] as? String ?? "", "limit": args?["limit"] ?? "",
                    "name": json?["name"] ?? "", "url": echo["url"] as? String ?? "",
                ]
            })
        #expect(echoed["method"] == "PUT")
        #expect(echoed["limit"] == "3")
        #expect(echoed["name"] == "Rex")
        #expect(echoed["url"]?.hasSuffix("/anything/pets/a%20b?limit=3") == true)
    }

    /// Adds `X-Adapted` to every request.
    struct Adapter: RequestInterceptor {
        func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
            var request = request
            request.setValue("yes", forHTTPHeaderField: "X-Adapted")
            return request
        }
    }

    /// Records the URL of every task created and completed.
    final class Monitor: EventMonitor {
        let created = Locked([String]())
        let completed = Locked([String]())
        func taskCreated(_ task: SessionTask) {
            created.withLock { $0.append(task.originalRequest?.url?.absoluteString ?? "") }
        }
        func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
            completed.withLock { $0.append(task.originalRequest?.url?.absoluteString ?? "") }
        }
    }

    @Test func theSessionsInterceptorAndEventMonitorsSeeTheRequests() async throws {
        let monitor = Monitor()
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = Adapter()
        configuration.eventMonitors = [monitor]
        let session = SessionManager(configuration: configuration)
        let transport = CourierClientTransport(session: session)
        let base = try await HTTPBin.shared.url()
        let (_, body) = try await transport.send(
            Self.request(.get, "/headers"), body: nil, baseURL: base, operationID: "headers")
        let headers = try await Self.json(body)["headers"] as? [String: String]
        #expect(headers?["X-Adapted"] == "yes")
        await session.invalidateAndWait(cancelingTasks: false)
        for _ in 0..<200 where monitor.completed.value.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        let url = base.absoluteString + "headers"
        #expect(monitor.created.value == [url])
        #expect(monitor.completed.value == [url])
    }

    @Test func theSessionsRetryPolicyRetriesAFailedStatus() async throws {
        let server = try await ScriptedServer.start([
            ScriptedServer.Reply(status: 503, body: "busy"), ScriptedServer.Reply(status: 200, body: "done"),
        ])
        defer { Task { try await server.stop() } }
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
        let transport = CourierClientTransport(session: SessionManager(configuration: configuration))
        let (response, body) = try await transport.send(
            Self.request(.get, "/flaky"), body: nil, baseURL: server.baseURL, operationID: "flaky")
        #expect(response.status == .ok)
        #expect(try await String(collecting: try #require(body), upTo: 64) == "done")
        #expect(server.received.count == 2)
    }

    @Test func cancellingTheCallingTaskCancelsTheRequest() async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))
        defer { Task { try await server.stop() } }
        let transport = CourierClientTransport(session: SessionManager(configuration: .ephemeral))
        let call = Task {
            try await transport.send(Self.request(.get, "/never"), body: nil, baseURL: server.baseURL, operationID: "x")
        }
        for _ in 0..<200 where server.requestCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        call.cancel()
        let error = await thrownCourierError { try await call.value }
        #expect(error?.errorCode == -999)
    }
}
