import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cookies through a whole session, on both transports: what a redirect hop, a failed attempt or the first part of a
/// download sets reaches the next request, and a host reached by a redirect cannot set cookies for another
/// (`127.0.0.1` and `localhost` are two hosts to the jar).
@Suite(.timeLimit(.minutes(1)))
struct CookieSessionTests {
    /// The request line's path, the `Host` field and the `Cookie` field ("" for none) of a request head.
    static func parse(_ head: String) -> (path: String, host: String, cookie: String) {
        let lines = head.components(separatedBy: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        func field(_ name: String) -> String {
            lines.dropFirst().first { $0.lowercased().hasPrefix(name + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        return (path, field("host"), field("cookie"))
    }

    static func response(_ status: String, _ fields: [String], body: String = "") -> Data {
        let head = (["HTTP/1.1 " + status, "Content-Length: \(body.utf8.count)", "Connection: close"] + fields)
            .joined(separator: "\r\n")
        return Data((head + "\r\n\r\n" + body).utf8)
    }

    private func manager(_ transport: String, jar: CookieJar, retries: Int = 0) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieStore = jar
        configuration.proxy = nil
        if retries > 0 { configuration.interceptor = RetryPolicy(retryLimit: retries, exponentialBackoffScale: 0.01) }
        let manager = HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
        return manager
    }

    @Test(
        "A redirect chain: each hop sends what the hops before set; the other host's Domain=127.0.0.1 is refused",
        arguments: TestTransports.names)
    func redirectChain(transport: String) async throws {
        let port = Locked(0)
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                let request = Self.parse(head)
                let port = port.value
                switch request.path {
                case "/login":
                    return Self.response(
                        "302 Found", ["Set-Cookie: sid=1; Path=/", "Location: http://localhost:\(port)/toss"])
                case "/toss":
                    return Self.response(
                        "302 Found",
                        [
                            "Set-Cookie: tossed=evil; Domain=127.0.0.1; Path=/", "Set-Cookie: local=1; Path=/",
                            "Location: http://127.0.0.1:\(port)/home",
                        ])
                default:
                    return Self.response("200 OK", ["Content-Type: text/plain"], body: request.cookie)
                }
            })
        defer { Task { try? await server.stop() } }
        port.withLock { $0 = server.port }
        let jar = CookieJar()
        let manager = manager(transport, jar: jar)
        defer { manager.invalidate(cancelingTasks: true) }
        let response = try await manager.send(
            "GET", server.baseURL.appendingPathComponent("login").absoluteString, serializer: StringResponseSerializer()
        )
        #expect(response.value == "sid=1")
        let requests = server.requestHeads.map(Self.parse)
        #expect(requests.map(\.path) == ["/login", "/toss", "/home"])
        #expect(requests.first { $0.path == "/toss" }?.cookie == "")  // sid is 127.0.0.1's alone
        #expect(jar.cookies.map(\.name).sorted() == ["local", "sid"])
        #expect(jar.cookies.first { $0.name == "local" }?.domain == "localhost")
    }

    @Test("A retried request sends the cookie the failed attempt set", arguments: TestTransports.names)
    func retry(transport: String) async throws {
        let attempts = Locked(0)
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                let attempt = attempts.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard attempt > 1 else {
                    return Self.response("503 Service Unavailable", ["Set-Cookie: attempt=1", "Retry-After: 0"])
                }
                return Self.response("200 OK", ["Content-Type: text/plain"], body: Self.parse(head).cookie)
            })
        defer { Task { try? await server.stop() } }
        let manager = manager(transport, jar: CookieJar(), retries: 2)
        defer { manager.invalidate(cancelingTasks: true) }
        let response = try await manager.send(
            "GET", server.baseURL.appendingPathComponent("r").absoluteString, serializer: StringResponseSerializer())
        #expect(response.value == "attempt=1")
        #expect(server.requestCount == 2)
    }

    @Test(
        "A download cut off and resumed with Range sends the cookie its first part set", arguments: TestTransports.names
    )
    func resumedDownload(transport: String) async throws {
        let body = String(repeating: "0123456789", count: 10)
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                let lines = head.lowercased()
                guard let range = lines.range(of: "range: bytes=") else {
                    // The whole body announced, a tenth of it sent, then the connection closes.
                    let fields = [
                        "HTTP/1.1 200 OK", "Content-Length: 100", "ETag: \"v1\"", "Accept-Ranges: bytes",
                        "Set-Cookie: dl=part1; Path=/",
                    ]
                    return Data((fields.joined(separator: "\r\n") + "\r\n\r\n" + body.prefix(10)).utf8)
                }
                let start = Int(lines[range.upperBound...].prefix { $0.isNumber }) ?? 0
                return Self.response(
                    "206 Partial Content", ["ETag: \"v1\"", "Content-Range: bytes \(start)-99/100"],
                    body: String(body.dropFirst(start)))
            })
        defer { Task { try? await server.stop() } }
        let manager = manager(transport, jar: CookieJar(), retries: 2)
        defer { manager.invalidate(cancelingTasks: true) }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("cookie-dl-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        _ = try await manager.download(URLRequest(url: server.baseURL.appendingPathComponent("file")), to: destination)
        #expect(try String(contentsOf: destination, encoding: .utf8) == body)
        let requests = server.requestHeads.map(Self.parse)
        #expect(requests.count == 2)
        #expect(requests.first?.cookie == "")
        #expect(requests.last?.cookie == "dl=part1")
    }

    /// Repeated `Set-Cookie` fields reach the jar one by one on every transport (URLSession joins them; a comma
    /// inside an `Expires` date must not split a cookie).
    @Test("Two Set-Cookie fields, one with an Expires date, are two cookies", arguments: TestTransports.names)
    func repeatedFields(transport: String) async throws {
        let server = try await FaultServer.start(
            .reply(close: true) { _ in
                Self.response(
                    "200 OK",
                    [
                        "Content-Type: text/plain", "Set-Cookie: a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/",
                        "Set-Cookie: b=2; Path=/",
                    ])
            })
        defer { Task { try? await server.stop() } }
        let jar = CookieJar()
        let manager = manager(transport, jar: jar)
        defer { manager.invalidate(cancelingTasks: true) }
        _ = try await manager.send("GET", server.baseURL.absoluteString, serializer: StringResponseSerializer())
        #expect(jar.cookieField(for: server.baseURL) == "a=1; b=2")
        #expect(jar.cookies.first { $0.name == "a" }?.expiresDate != nil)
    }
}
