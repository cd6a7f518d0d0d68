import CourierHTTPTypes
import Foundation
import HTTPTypes
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A session called with `HTTPRequest` and answering with `HTTPResponse`, against httpbin and the NIO test servers.
@Suite(.timeLimit(.minutes(2)))
struct SessionManagerHTTPTypesTests {
    static let transports = TestTransports.names

    static func manager(_ transport: String) -> SessionManager {
        SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
    }

    static let twoCookies = Data(
        ("HTTP/1.1 200 OK\r\nX-Zeta: 1\r\nset-cookie: a=1\r\nX-Alpha: 2\r\n"
            + "Set-Cookie: b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT\r\nContent-Length: 2\r\n\r\nok").utf8)

    /// On NIOTransport, which hands the session the head as it was read. (URLSessionTransport only has Foundation's
    /// `HTTPURLResponse`, which on Linux keeps one `Set-Cookie` of two.)
    @Test func twoSetCookieFieldsFromAServerStayApartInOrderWithTheirCase() async throws {
        let server = try await FaultServer.start(.respond(Self.twoCookies, close: true))
        defer { Task { try await server.stop() } }
        let manager = Self.manager("NIOTransport")
        let (data, response) = try await manager.data(for: HTTPRequest(method: .get, url: server.baseURL))
        #expect(data == Data("ok".utf8))
        #expect(response.status == .ok)
        #expect(
            response.headerFields.map(\.name.rawName) == [
                "X-Zeta", "set-cookie", "X-Alpha", "Set-Cookie", "Content-Length",
            ])
        #expect(response.headerFields[values: .setCookie] == ["a=1", "b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT"])
    }

    @Test(arguments: transports)
    func aRequestWithABodyAndFieldsReachesHTTPBin(transport: String) async throws {
        var request = HTTPRequest(method: .post, url: try await HTTPBin.url("post?q=a%20b"))
        request.headerFields[.contentType] = "text/plain"
        request.headerFields.append(HTTPField(name: try #require(HTTPField.Name("X-Repeated")), value: "1"))
        request.headerFields.append(HTTPField(name: try #require(HTTPField.Name("X-Repeated")), value: "2"))
        let (data, response) = try await Self.manager(transport).upload(
            for: request, from: Data("hello body".utf8))
        #expect(response.status == .ok)
        let echo = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(echo["data"] as? String == "hello body")
        #expect((echo["args"] as? [String: String])?["q"] == "a b")
        let headers = try #require(echo["headers"] as? [String: String])
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers["X-Repeated"] == "1, 2")
    }

    @Test func aBodyFromAnAsyncSequenceIsStreamedToTheServer() async throws {
        let server = try await ScriptedServer.start([ScriptedServer.Reply(status: 200, body: "got it")])
        defer { Task { try await server.stop() } }
        let chunk = TestBytes.periodic(count: 256 * 1024) { UInt8(truncatingIfNeeded: $0) }
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<8 { continuation.yield(chunk) }
            continuation.finish()
        }
        let request = HTTPRequest(method: .put, url: server.url("blob"))
        let (data, response) = try await SessionManager(configuration: .ephemeral).upload(
            for: request, body: .stream(chunks, length: nil))
        #expect(response.status == .ok)
        #expect(data == Data("got it".utf8))
        let received = try #require(server.received.first)
        #expect(received.method == "PUT")
        #expect(received.bodyCount == 8 * chunk.count)
        #expect(received.headers["transfer-encoding"] == "chunked")
    }

    @Test(arguments: transports)
    func aNotFoundIsAResponseNotAnError(transport: String) async throws {
        let (_, response) = try await Self.manager(transport).data(
            for: HTTPRequest(method: .get, url: try await HTTPBin.url("status/404")))
        #expect(response.status == .notFound)
    }

    @Test func aStreamedResponseArrivesInChunksWithItsHead() async throws {
        let server = try await FaultServer.start(.slowBody(bytes: 4, every: 0.1))
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral)
        let (response, chunks) = try await manager.stream(for: HTTPRequest(method: .get, url: server.baseURL))
        #expect(response.headerFields[.contentLength] == "4")
        var received: [Data] = []
        for try await chunk in chunks { received.append(chunk) }
        #expect(received.count >= 2)
        #expect(Array(received.joined()) == FaultServer.body(0..<4))
        withExtendedLifetime(manager) {}
    }

    @Test func theResponseHeadOfAStreamedTaskKeepsRepeatedFields() async throws {
        let server = try await FaultServer.start(.respond(Self.twoCookies, close: true))
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral)
        let streamed = try await manager.stream(URLRequest(url: server.baseURL))
        let head = try #require(streamed.task.responseHead)
        #expect(head.headers.values(for: "Set-Cookie").count == 2)
        // Foundation's form joins them.
        #expect(streamed.response.value(forHTTPHeaderField: "Set-Cookie")?.contains("a=1, b=2") == true)
        for try await _ in streamed.chunks {}
        withExtendedLifetime(manager) {}
    }
}
