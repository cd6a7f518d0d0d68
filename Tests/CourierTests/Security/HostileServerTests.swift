import CourierFixtures
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Servers that try to crash Courier, reach the machine's local sockets, take a credential or a secret header, or
/// lead a request out of TLS. Each case runs on both transports through a real ``HTTPSessionManager`` against a
/// ``FaultServer`` on 127.0.0.1 that writes whatever bytes the case needs.
@Suite("Hostile servers", .serialized, .timeLimit(.minutes(2)))
struct HostileServerTests {
    // MARK: Redirects to local sockets

    @Test(
        "A redirect to a Unix socket is not followed: the 3xx is delivered and the socket sees nothing",
        arguments: FaultTransportKind.all, ["http+unix", "https+unix", "unix"])
    func redirectToUnixSocket(_ kind: FaultTransportKind, scheme: String) async throws {
        let socket = try await UnixSocketServer.start()
        defer { Task { try? await socket.stop() } }
        let encoded = socket.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let location = scheme == "unix" ? "unix://\(socket.path)" : "\(scheme)://\(encoded)/secret"
        try await withHostile(.reply(close: true) { _ in Self.redirect(to: location) }, kind) { server, manager in
            let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
            #expect(response.statusCode == 302)
            #expect(response.response.value(forHTTPHeaderField: "Location") == location)
        }
        #expect(socket.connectionCount == 0, "the Unix socket was reached")
    }

    @Test("A hook that proposes a Unix-socket redirect fails with -1002", arguments: FaultTransportKind.all)
    func hookProposingUnixSocket(_ kind: FaultTransportKind) async throws {
        let socket = try await UnixSocketServer.start()
        defer { Task { try? await socket.stop() } }
        try await withHostile(.reply(close: true) { _ in Self.redirect(to: "/elsewhere") }, kind) { server, manager in
            let target = try #require(
                URL(string: "http+unix://\(socket.path.replacingOccurrences(of: "/", with: "%2F"))/x"))
            var hooks = manager.hooks
            hooks.willPerformRedirection = { _, _, proposed in
                var next = proposed
                next.url = target
                return next
            }
            manager.hooks = hooks
            let error = await Self.failure(of: manager, URLRequest(url: server.baseURL))
            #expect(error?.errorCode == -1002, "\(String(describing: error))")
        }
        #expect(socket.connectionCount == 0)
    }

    @Test("A request to a Unix-socket URL needs allowsUnixSocketURLs", arguments: FaultTransportKind.all)
    func directUnixSocketRequestNeedsOptIn(_ kind: FaultTransportKind) async throws {
        let socket = try await UnixSocketServer.start()
        defer { Task { try? await socket.stop() } }
        let encoded = socket.path.replacingOccurrences(of: "/", with: "%2F")
        let url = try #require(URL(string: "http+unix://\(encoded)/hello"))
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: kind.make())
        defer { manager.invalidate(cancelingTasks: true) }
        let error = await Self.failure(of: manager, URLRequest(url: url))
        #expect(error?.errorCode == -1002, "\(String(describing: error))")
        #expect(socket.connectionCount == 0)
        if kind.isNIO {
            var configuration = SessionConfiguration.ephemeral
            configuration.allowsUnixSocketURLs = true
            let allowed = HTTPSessionManager(configuration: configuration, transport: NIOTransport())
            defer { allowed.invalidate(cancelingTasks: true) }
            let response = try await allowed.send(URLRequest(url: url), serializer: Self.anyStatus)
            #expect(response.statusCode == 200)
            #expect(socket.connectionCount == 1)
        }
    }

    // MARK: Credentials and secrets

    @Test("A Digest credential never answers a Basic challenge", arguments: FaultTransportKind.all)
    func digestCredentialRefusesBasic(_ kind: FaultTransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.credential = Credential(user: "user", password: "hunter2", schemes: [.digest])
        let challenge = Self.response(
            status: "401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"x\""], body: "no")
        try await withHostile(.reply(close: false) { _ in challenge }, kind, configuration) { server, manager in
            let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
            #expect(response.statusCode == 401)
            #expect(server.requestCount == 1)
            #expect(!server.requestHeads.contains { $0.lowercased().contains("authorization:") })
        }
    }

    @Test("A Digest credential answers Digest even when Basic is offered first", arguments: FaultTransportKind.all)
    func digestChosenOverBasic(_ kind: FaultTransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.credential = Credential(user: "user", password: "hunter2", schemes: [.digest])
        let challenge = Self.response(
            status: "401 Unauthorized",
            headers: ["WWW-Authenticate: Basic realm=\"x\", Digest realm=\"x\", nonce=\"abc\", qop=\"auth\""],
            body: "no")
        try await withHostile(.reply(close: false) { _ in challenge }, kind, configuration) { server, manager in
            let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
            #expect(response.statusCode == 401)
            let answers = server.requestHeads.compactMap { head in
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }
            }
            #expect(answers.count == 1)
            #expect(answers.first?.contains("Digest username=\"user\"") == true)
            #expect(!server.requestHeads.joined().contains("hunter2"))
            #expect(!server.requestHeads.joined().contains(Data("user:hunter2".utf8).base64EncodedString()))
        }
    }

    @Test(
        "The session's credential is never sent to the origin a redirect leads to", arguments: FaultTransportKind.all)
    func credentialStaysAtOrigin(_ kind: FaultTransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.credential = Credential(user: "user", password: "hunter2")
        let other = try await FaultServer.start(
            .reply(close: false) { _ in
                Self.response(status: "401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"evil\""], body: "")
            })
        defer { Task { try? await other.stop() } }
        let location = other.baseURL.absoluteString + "steal"
        try await withHostile(.reply(close: true) { _ in Self.redirect(to: location) }, kind, configuration) {
            server, manager in
            let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
            #expect(response.statusCode == 401)
        }
        #expect(other.requestCount == 1)
        #expect(!other.requestHeads.contains { $0.lowercased().contains("authorization:") })
    }

    @Test("A credential given for a protection space is answered there only", arguments: FaultTransportKind.all)
    func credentialWithProtectionSpace(_ kind: FaultTransportKind) async throws {
        let challenge = Self.response(
            status: "401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"inside\""], body: "")
        let ok = FaultServer.ok("in")
        try await withHostile(
            .reply(close: false) { head in head.lowercased().contains("authorization:") ? ok : challenge }, kind
        ) { server, _ in
            for (realm, expected) in [("inside", 200), ("other", 401)] {
                var configuration = SessionConfiguration.ephemeral
                configuration.credential = Credential(
                    user: "u", password: "p",
                    protectionSpace: .init(scheme: "http", host: "127.0.0.1", port: server.port, realm: realm))
                let manager = HTTPSessionManager(configuration: configuration, transport: kind.make())
                defer { manager.invalidate(cancelingTasks: true) }
                let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
                #expect(response.statusCode == expected, "realm \(realm)")
            }
        }
    }

    @Test(
        "A cross-origin redirect drops Authorization, Proxy-Authorization, Cookie and the headers named",
        arguments: FaultTransportKind.all)
    func crossOriginRedirectDropsSecrets(_ kind: FaultTransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.headersRemovedOnCrossOriginRedirect = ["x-api-key"]
        let other = try await FaultServer.start(.reply(close: false) { _ in FaultServer.ok("there") })
        defer { Task { try? await other.stop() } }
        let location = other.baseURL.absoluteString + "next"
        try await withHostile(.reply(close: true) { _ in Self.redirect(to: location) }, kind, configuration) {
            server, manager in
            var request = URLRequest(url: server.baseURL)
            for (name, value) in [
                ("Authorization", "Bearer a"), ("Proxy-Authorization", "Basic b"), ("Cookie", "c=1"),
                ("X-API-Key", "k"), ("X-Kept", "kept"),
            ] {
                request.setValue(value, forHTTPHeaderField: name)
            }
            let response = try await manager.send(request, serializer: Self.anyStatus)
            #expect(response.statusCode == 200)
            #expect(server.requestHeads.first?.contains("Proxy-Authorization: Basic b") == true)
        }
        let forwarded = try #require(other.requestHeads.first).lowercased()
        for name in ["authorization:", "proxy-authorization:", "cookie:", "x-api-key:"] {
            #expect(!forwarded.contains("\n" + name), "\(name) was forwarded")
        }
        #expect(forwarded.contains("x-kept: kept"))
    }

    // MARK: Ports

    @Test(
        "A port above 65535 in a Location fails with -1000, never a trap",
        arguments: FaultTransportKind.all, ["127.0.0.1:70000", "localhost:70000", "[::1]:65536"])
    func hugePortInLocation(_ kind: FaultTransportKind, authority: String) async throws {
        try await withHostile(.reply(close: true) { _ in Self.redirect(to: "http://\(authority)/x") }, kind) {
            server, manager in
            let error = await Self.failure(of: manager, URLRequest(url: server.baseURL))
            #expect(error?.errorCode == -1000, "\(String(describing: error))")
        }
    }

    @Test(
        "A URL with a port above 65535 fails with -1000 before anything is sent",
        arguments: FaultTransportKind.all,
        ["http://127.0.0.1:70000/", "http://localhost:65536/x", "http://[::1]:99999/"])
    func hugePortInRequest(_ kind: FaultTransportKind, url: String) async throws {
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: kind.make())
        defer { manager.invalidate(cancelingTasks: true) }
        do {
            _ = try await manager.get(url)
            Issue.record("the request was sent")
        } catch let error as CourierError {
            #expect(error.errorCode == -1000, "\(error)")
        }
        let direct = await Self.failure(of: manager, URLRequest(url: try #require(URL(string: url))))
        #expect(direct?.errorCode == -1000, "\(String(describing: direct))")
        #expect(throws: CourierError.self) {
            try HTTPRequestSerializer().request(method: "GET", urlString: url, parameters: nil)
        }
    }

    // MARK: Status codes

    @Test(
        "A status code below 100 fails with -1011, never a crash",
        arguments: FaultTransportKind.all, ["000", "001", "099", "042"])
    func statusBelow100(_ kind: FaultTransportKind, status: String) async throws {
        let bytes = Data("HTTP/1.1 \(status) Weird\r\nContent-Length: 2\r\n\r\nhi".utf8)
        try await withHostile(.respond(bytes, close: true), kind) { server, manager in
            let error = await Self.failure(of: manager, URLRequest(url: server.baseURL))
            #expect(error?.errorCode == -1011, "\(String(describing: error))")
            // The transport still works afterwards.
            let again = await Self.failure(of: manager, URLRequest(url: server.baseURL))
            #expect(again?.errorCode == -1011)
        }
    }

    // MARK: Sizes

    /// A resumed download's offset plus a `206`'s `Content-Length` past `Int64.max`. `9223372036854775000` is the
    /// largest length tried on URLSessionTransport: FoundationNetworking on Linux itself traps on a `Content-Length`
    /// of 2^63 − 512 or more (`_EasyHandle` converts libcurl's `Double` with `Int64(_:)`), before any delegate
    /// sees the response, so no code of Courier's can guard that transport there (see SECURITY.md).
    @Test(
        "A 206 whose length plus the resume offset passes Int64.max completes once with an error",
        arguments: [
            (FaultTransportKind.nio, "9223372036854775807"), (FaultTransportKind.nio, "9223372036854775000"),
            (FaultTransportKind.urlSession, "9223372036854775000"),
        ])
    func hugeContentLengthOnResume(_ kind: FaultTransportKind, length: String) async throws {
        let head = Data(
            ("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 1000-9223372036854775806/*\r\n"
                + "Content-Length: \(length)\r\n\r\nabc").utf8)
        try await withHostile(.respond(head, close: true), kind) { server, manager in
            // A resumed download: 1000 bytes already in Courier's own temporary file.
            let (url, handle) = try TemporaryFiles.makeFile(prefix: "Courier-test")
            try handle.write(contentsOf: Data(count: 1000))
            try handle.close()
            let resume = DownloadResumeData(
                url: server.baseURL, temporaryFileURL: url, bytesOnDisk: 1000, entityTag: "\"e\"", lastModified: nil)
            let finished = Locked<[(any Error)?]>([])
            let task = manager.downloadTask(withResumeData: resume.encoded(), progress: nil, destination: nil) {
                _, _, error in finished.withLock { $0.append(error) }
            }
            task.resume()
            try await waitUntil { finished.withLock { !$0.isEmpty } }
            await manager.settle()
            #expect(finished.withLock { $0.count } == 1)
            #expect(finished.withLock { $0.first.flatMap { $0 } } is CourierError)
        }
    }

    @Test(
        "Resume data naming a file outside Courier's directory never touches that file",
        arguments: FaultTransportKind.all)
    func resumeDataCannotNameAnyFile(_ kind: FaultTransportKind) async throws {
        let victim = FileManager.default.temporaryDirectory.appendingPathComponent("victim-\(UUID().uuidString)")
        try Data("precious".utf8).write(to: victim)
        defer { try? FileManager.default.removeItem(at: victim) }
        try await withHostile(.respond(FaultServer.ok("hello"), close: true), kind) { server, manager in
            let resume = DownloadResumeData(
                url: server.baseURL, temporaryFileURL: victim, bytesOnDisk: 2, entityTag: "\"e\"", lastModified: nil)
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("dest-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let response = try await manager.download(resumingWith: resume.encoded(), to: destination)
            #expect(try String(contentsOf: response.value, encoding: .utf8) == "hello")
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious")
    }

    @Test("Courier's temporary files are 0600 in a directory only this user can enter")
    func temporaryFilesArePrivate() throws {
        let (url, handle) = try TemporaryFiles.makeFile(prefix: "Courier-test")
        try handle.close()
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: url.deletingLastPathComponent().path)
        #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(TemporaryFiles.isOwnFile(url))
        #expect(!TemporaryFiles.isOwnFile(URL(fileURLWithPath: "/etc/passwd")))
    }

    // MARK: Malformed responses that already failed cleanly (kept so they stay that way)

    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: @Sendable () async throws -> Data
        /// The codes the task may fail with; empty when a lenient parse that succeeds is also right.
        var codes: Set<Int>
        /// Words the error's description must contain, on ``NIOTransport``.
        var words: String? = nil
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(name: "garbage status line", bytes: { Data("HELLO WORLD\r\n\r\n".utf8) }, codes: [-1011, -1005]),
        Malformed(
            name: "header without a colon",
            bytes: { Data("HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 2\r\n\r\nhi".utf8) },
            codes: [-1011, -1005]),
        Malformed(
            name: "100 KB header",
            bytes: {
                Data(
                    ("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n"
                        + "Content-Length: 2\r\n\r\nhi").utf8)
            }, codes: []),
        Malformed(
            name: "Content-Length with Transfer-Encoding",
            bytes: {
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
                        .utf8)
            }, codes: [-1011, -1005]),
        Malformed(
            name: "bad chunk size",
            bytes: { Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n".utf8) },
            codes: [-1011, -1005]),
        Malformed(
            name: "chunk size above 2^64",
            bytes: {
                Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nhi\r\n".utf8)
            }, codes: [-1011, -1005]),
        Malformed(
            name: "conflicting Content-Length fields",
            bytes: { Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello".utf8) },
            codes: [-1011, -1005]),
        Malformed(
            name: "Content-Length of 2^64",
            bytes: { Data("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nhi".utf8) },
            codes: [-1011, -1005]),
        Malformed(
            name: "gzip bomb (10 MB of zeros in 10 KB)",
            bytes: { try await Self.gzipResponse(zeros: 10_000_000) }, codes: [-1011],
            words: "expands beyond the decompression limit"),
        Malformed(
            name: "corrupt gzip",
            bytes: {
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 14\r\n\r\n\u{1F}\u{8B}\u{08}\0\0\0\0\0\0\u{03}garb"
                        .utf8)
            }, codes: [-1011, -1005], words: "corrupt"),
    ]

    @Test("Malformed responses complete once, cleanly", arguments: FaultTransportKind.all, Self.malformed)
    func malformedResponse(_ kind: FaultTransportKind, _ malformed: Malformed) async throws {
        let bytes = try await malformed.bytes()
        try await withHostile(.respond(bytes, close: true), kind) { server, manager in
            do {
                let response = try await manager.send(URLRequest(url: server.baseURL), serializer: Self.anyStatus)
                if !malformed.codes.isEmpty, kind.isNIO {
                    Issue.record("\(malformed.name) was accepted: \(response.statusCode)")
                }
            } catch let error as CourierError {
                // URLSession (libcurl) is more lenient and words some of these its own way: there it must only
                // fail once, with a CourierError.
                if kind.isNIO {
                    #expect(
                        malformed.codes.isEmpty || malformed.codes.contains(error.errorCode),
                        "\(malformed.name): \(error)")
                }
                if kind.isNIO, let words = malformed.words {
                    #expect(error.localizedDescription.contains(words), "\(error.localizedDescription)")
                }
            }
        }
    }

    @Test("A redirect loop fails with -1007", arguments: FaultTransportKind.all)
    func redirectLoop(_ kind: FaultTransportKind) async throws {
        try await withHostile(.reply(close: false) { _ in Self.redirect(to: "/again") }, kind) { server, manager in
            let error = await Self.failure(of: manager, URLRequest(url: server.baseURL))
            #expect(error?.errorCode == -1007)
            #expect(server.requestCount <= 17)
        }
    }

    /// A `200` whose body is `zeros` zero bytes, gzipped (by Python's `gzip`, which CI installs with httpbin).
    static func gzipResponse(zeros: Int) async throws -> Data {
        let body = try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", "-c", "import gzip, sys; sys.stdout.buffer.write(gzip.compress(bytes(\(zeros))))"]
        ).stdout
        var data = Data(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        data.append(body)
        return data
    }

    // MARK: Helpers

    static let anyStatus = HTTPResponseSerializer(acceptableStatusCodes: nil)

    static func redirect(to location: String, status: String = "302 Found") -> Data {
        response(status: status, headers: ["Location: \(location)"], body: "")
    }

    static func response(status: String, headers: [String], body: String) -> Data {
        let fields = (headers + ["Content-Length: \(body.utf8.count)"]).joined(separator: "\r\n")
        return Data("HTTP/1.1 \(status)\r\n\(fields)\r\n\r\n\(body)".utf8)
    }

    /// The error `request` fails with, or `nil` (with an issue recorded) when it succeeds.
    static func failure(
        of manager: HTTPSessionManager, _ request: URLRequest, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> CourierError? {
        await thrownCourierError(sourceLocation: sourceLocation) {
            try await manager.send(request, serializer: anyStatus)
        }
    }
}

/// Runs `body` with a ``FaultServer`` behaving as `behaviour` and a manager on a new transport of `kind`.
func withHostile(
    _ behaviour: FaultServer.Behaviour, _ kind: FaultTransportKind,
    _ configuration: SessionConfiguration = .ephemeral,
    _ body: (FaultServer, HTTPSessionManager) async throws -> Void
) async throws {
    let server = try await FaultServer.start(behaviour)
    try await withSession(server, kind, configuration: configuration) { manager in try await body(server, manager) }
}

/// A Unix-domain socket that answers any request with `200 OK` and counts its connections: the local service a
/// hostile redirect would try to reach.
final class UnixSocketServer: Sendable {
    let path: String
    private let channel: any Channel
    private let connections: Locked<Int>

    private init(path: String, channel: any Channel, connections: Locked<Int>) {
        self.path = path
        self.channel = channel
        self.connections = connections
    }

    var connectionCount: Int { connections.withLock { $0 } }

    static func start() async throws -> UnixSocketServer {
        let path = "/tmp/courier-\(UUID().uuidString.prefix(8)).sock"
        let connections = Locked(0)
        let channel = try await ServerBootstrap(group: LoopbackServer.group)
            .childChannelInitializer { channel in
                connections.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(UnixSocketResponder())
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .get()
        return UnixSocketServer(path: path, channel: channel, connections: connections)
    }

    func stop() async throws {
        try await channel.close()
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Answers the first bytes of any request with a fixed `200` and closes.
private final class UnixSocketResponder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = FaultServer.ok("local secret")
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }
}
