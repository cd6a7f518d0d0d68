import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import Courier

/// ``NIOTransport/Configuration``'s connection options (what AsyncHTTPClient users set on its configuration) apply on
/// every path that connects: Courier's own HTTP/1.1 pool, AsyncHTTPClient, WebSockets and the trust gate's probe.
@Suite(.timeLimit(.minutes(1)))
struct NIOTransportConnectionOptionsTests {
    /// The three ways an `http` request goes out: collected on Courier's own connections, collected through
    /// AsyncHTTPClient, streamed through AsyncHTTPClient.
    enum Path: CaseIterable, Sendable {
        case ownPool, clientCollected, clientStreamed
    }

    private static func fetch(_ url: URL, configuration: NIOTransport.Configuration, path: Path) async throws -> Data {
        var configuration = configuration
        configuration.usesOwnConnections = path == .ownPool
        let transport = NIOTransport(configuration: configuration)
        defer { Task { await transport.shutdown() } }
        return try await fetch(url, on: transport, streamed: path == .clientStreamed)
    }

    private static func fetch(_ url: URL, on transport: NIOTransport, streamed: Bool) async throws -> Data {
        let request = TransportRequest(method: "GET", url: url)
        let response =
            streamed
            ? try await transport.send(request)
            : try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
        var data = Data()
        for try await chunk in response.body { data.append(chunk) }
        return data
    }

    @Test(
        "hostAddresses: the connection goes to the address, the request keeps the URL's host", arguments: Path.allCases)
    func hostAddresses(path: Path) async throws {
        let server = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        // `.test` names never resolve (RFC 6761): only the override can reach the server.
        configuration.hostAddresses = ["courier-override.test": "127.0.0.1"]
        let url = try #require(URL(string: "http://courier-override.test:\(server.port)/x"))
        #expect(try await Self.fetch(url, configuration: configuration, path: path) == Data("hello".utf8))
        let head = try #require(server.requestHeads.first).lowercased()
        #expect(
            head.contains("\r\nhost: courier-override.test:\(server.port)\r\n")
                || head.hasSuffix("\r\nhost: courier-override.test:\(server.port)"))
        try await server.stop()
    }

    @Test("hostAddresses: a WebSocket connects to the address and sends the URL's host")
    func hostAddressesWebSocket() async throws {
        let server = try await WebSocketServer.start()
        var configuration = NIOTransport.Configuration()
        configuration.hostAddresses = ["courier-override.test": "127.0.0.1"]
        let transport = NIOTransport(configuration: configuration)
        let url = try #require(URL(string: "ws://courier-override.test:\(server.port)/socket"))
        let connection = try await transport.openWebSocket(
            TransportRequest(method: "GET", url: url), configuration: WebSocketConfiguration())
        try await connection.send(.string("hi"))
        #expect(try await connection.receive() == .string("hi"))
        #expect(
            server.upgradeHeaders.withLock { $0.first?.first(name: "Host") } == "courier-override.test:\(server.port)")
        await connection.close(code: .normalClosure, reason: "")
        await transport.shutdown()
        try await server.stop()
    }

    @Test("localAddress: connections leave from the address asked for", arguments: Path.allCases)
    func localAddress(path: Path) async throws {
        let server = try await PeerEchoServer.start()
        var configuration = NIOTransport.Configuration()
        // All of 127/8 is loopback on Linux; the system's own choice would be 127.0.0.1.
        configuration.localAddress = "127.0.0.2"
        let body = try await Self.fetch(server.url, configuration: configuration, path: path)
        #expect(String(decoding: body, as: UTF8.self) == "127.0.0.2")
        try await server.stop()
    }

    @Test("localAddress: one that is not an IP address fails the request with a CourierError", arguments: Path.allCases)
    func badLocalAddress(path: Path) async throws {
        let server = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        configuration.localAddress = "not-an-address"
        await #expect(throws: CourierError.self) {
            _ = try await Self.fetch(server.baseURL, configuration: configuration, path: path)
        }
        #expect(server.requestCount == 0)
        try await server.stop()
    }

    @Test("maximumRequestsPerConnection: a connection is replaced after that many requests")
    func maximumRequestsPerConnection() async throws {
        // What the limit guarantees: a connection never serves more than `limit` requests (so at least 4 / limit
        // connections), and without a limit connections are reused. How many a run opens beyond that depends on
        // whether the previous connection is back in the pool when the next request starts (seen under a full suite:
        // 2 connections without a limit).
        for (limit, fewest, most) in [(Int?.none, 1, 3), (2, 2, 3), (1, 4, 4)] {
            let server = try await FaultServer.start(.countingConnections)
            var configuration = NIOTransport.Configuration()
            configuration.maximumRequestsPerConnection = limit
            let transport = NIOTransport(configuration: configuration)
            for _ in 0..<4 {
                #expect(try await Self.fetch(server.baseURL, on: transport, streamed: false) == Data("hello".utf8))
            }
            #expect(server.requestCount == 4)
            #expect((fewest...most).contains(server.connectionCount), "limit \(String(describing: limit))")
            await transport.shutdown()
            try await server.stop()
        }
    }

    /// The ways a TLS connection starts: AsyncHTTPClient's client, the trust gate's probe (a non-default policy),
    /// a WebSocket.
    enum TLSPath: CaseIterable, Sendable {
        case client, trustGate, webSocket
    }

    private static func helloAfterConnecting(
        _ configuration: NIOTransport.Configuration, path: TLSPath
    ) async throws -> ClientHelloRecorder.Hello {
        let recorder = try await ClientHelloRecorder.start()
        let transport = NIOTransport(configuration: configuration)
        var request = TransportRequest(
            method: "GET",
            url: try #require(URL(string: "\(path == .webSocket ? "wss" : "https")://localhost:\(recorder.port)/")))
        if path == .trustGate { request.securityPolicy.validatesDomainName = false }
        // The recorder closes the connection after the ClientHello: every attempt fails.
        await #expect(throws: CourierError.self) {
            switch path {
            case .client: _ = try await transport.send(request)
            case .trustGate:
                _ = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
            case .webSocket: _ = try await transport.openWebSocket(request, configuration: WebSocketConfiguration())
            }
        }
        await transport.shutdown()
        try await recorder.stop()
        return try #require(recorder.hellos.withLock { $0.first })
    }

    @Test(
        "TLS versions and cipher suites: the ClientHello offers what the configuration says",
        arguments: TLSPath.allCases)
    func tlsVersionsAndCiphers(path: TLSPath) async throws {
        let defaults = try await Self.helloAfterConnecting(NIOTransport.Configuration(), path: path)
        #expect(defaults.versions.contains(0x0304))
        #expect(defaults.cipherSuites.contains(0xC030))

        var twelve = NIOTransport.Configuration()
        twelve.maximumTLSVersion = .tlsv12
        twelve.cipherSuites = [.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
        let limited = try await Self.helloAfterConnecting(twelve, path: path)
        #expect(!limited.versions.contains(0x0304))
        #expect(limited.versions.contains(0x0303))
        #expect(limited.cipherSuites.contains(0xC02F))
        #expect(!limited.cipherSuites.contains(0xC030))

        var thirteen = NIOTransport.Configuration()
        thirteen.minimumTLSVersion = .tlsv13
        let modern = try await Self.helloAfterConnecting(thirteen, path: path)
        #expect(modern.versions == [0x0304])
    }

    @Test("localAddress and hostAddresses apply to the trust gate's probe and to wss")
    func dialOptionsOnTLSPaths() async throws {
        for path in [TLSPath.trustGate, .webSocket] {
            var configuration = NIOTransport.Configuration()
            configuration.localAddress = "127.0.0.3"
            configuration.hostAddresses = ["courier-override.test": "127.0.0.1"]
            let recorder = try await ClientHelloRecorder.start()
            let transport = NIOTransport(configuration: configuration)
            var request = TransportRequest(
                method: "GET",
                url: try #require(
                    URL(string: "\(path == .webSocket ? "wss" : "https")://courier-override.test:\(recorder.port)/")))
            request.securityPolicy.validatesDomainName = false
            await #expect(throws: CourierError.self) {
                if path == .webSocket {
                    _ = try await transport.openWebSocket(request, configuration: WebSocketConfiguration())
                } else {
                    _ = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
                }
            }
            await transport.shutdown()
            try await recorder.stop()
            let hello = try #require(recorder.hellos.withLock { $0.first })
            #expect(hello.peer == "127.0.0.3", "\(path)")
            #expect(hello.serverName == "courier-override.test", "\(path)")
        }
    }
}

/// Answers every request with the client's IP address as the body, to see which local address a connection left
/// from.
private struct PeerEchoServer {
    let channel: any Channel
    let url: URL

    static func start() async throws -> PeerEchoServer {
        let (channel, _, url) = try await LoopbackServer.bind(path: "peer") { pipeline in
            try pipeline.addHandler(Handler())
        }
        return PeerEchoServer(channel: channel, url: url)
    }

    func stop() async throws { try await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var received = ""

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            received += String(buffer: unwrapInboundIn(data))
            // One request at a time, without a body: its head ends with a blank line.
            guard received.contains("\r\n\r\n") else { return }
            received = ""
            let peer = context.remoteAddress?.ipAddress ?? "?"
            let response = "HTTP/1.1 200 OK\r\nContent-Length: \(peer.utf8.count)\r\n\r\n\(peer)"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: response)), promise: nil)
        }
    }
}

/// Reads the TLS ClientHello of each connection (the offered versions and cipher suites, the SNI name, the peer's
/// address), then closes it.
final class ClientHelloRecorder: Sendable {
    struct Hello: Sendable {
        var versions: [UInt16]
        var cipherSuites: [UInt16]
        var serverName: String?
        var peer: String?
    }

    let port: Int
    let hellos: Locked<[Hello]>
    private let channel: any Channel

    private init(channel: any Channel, port: Int, hellos: Locked<[Hello]>) {
        self.channel = channel
        self.port = port
        self.hellos = hellos
    }

    static func start() async throws -> ClientHelloRecorder {
        let hellos = Locked<[Hello]>([])
        let (channel, port, _) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.addHandler(Handler(hellos: hellos))
        }
        return ClientHelloRecorder(channel: channel, port: port, hellos: hellos)
    }

    func stop() async throws { try await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private var bytes: [UInt8] = []
        private let hellos: Locked<[Hello]>

        init(hellos: Locked<[Hello]>) { self.hellos = hellos }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += unwrapInboundIn(data).readableBytesView
            // A TLS record: type, version, a 2-byte length, then the handshake message.
            guard bytes.count >= 5, bytes.count >= 5 + (Int(bytes[3]) << 8 | Int(bytes[4])) else { return }
            if var hello = ClientHelloRecorder.parse(bytes) {
                hello.peer = context.remoteAddress?.ipAddress
                hellos.withLock { $0.append(hello) }
            }
            context.close(promise: nil)
        }
    }

    /// The ClientHello in the first record (RFC 8446 §4.1.2), or `nil` when it is not one.
    static func parse(_ record: [UInt8]) -> Hello? {
        var at = 5
        func u8() -> Int? {
            guard at < record.count else { return nil }
            defer { at += 1 }
            return Int(record[at])
        }
        func u16() -> Int? {
            guard let high = u8(), let low = u8() else { return nil }
            return high << 8 | low
        }
        guard record.first == 22, u8() == 1 else { return nil }
        at += 3  // the handshake message's length
        guard let legacyVersion = u16() else { return nil }
        at += 32  // random
        guard let sessionID = u8() else { return nil }
        at += sessionID
        guard let suitesLength = u16() else { return nil }
        var suites: [UInt16] = []
        for _ in 0..<suitesLength / 2 {
            guard let suite = u16() else { return nil }
            suites.append(UInt16(suite))
        }
        guard let compression = u8() else { return nil }
        at += compression
        var hello = Hello(versions: [UInt16(legacyVersion)], cipherSuites: suites)
        guard let extensionsLength = u16() else { return hello }
        let end = at + extensionsLength
        while at + 4 <= end, let type = u16(), let length = u16() {
            let start = at
            if type == 0x002B, let count = u8() {  // supported_versions
                hello.versions = (0..<count / 2).compactMap { _ in u16().map(UInt16.init) }
            } else if type == 0x0000, u16() != nil, u8() == 0, let nameLength = u16(),
                at + nameLength <= record.count
            {  // server_name: a list holding one host_name
                hello.serverName = String(decoding: record[at..<at + nameLength], as: UTF8.self)
            }
            at = start + length
        }
        return hello
    }
}
