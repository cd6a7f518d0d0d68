import AsyncHTTPClient
import CourierFixtures
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import Courier

/// ``NIOTransport`` on a caller's event-loop group or `HTTPClient` (a Vapor or Hummingbird app's): its connections
/// run there, and its shutdown leaves the group and the client running for their owner to shut down.
@Suite(.timeLimit(.minutes(1)))
struct NIOTransportSharedResourcesTests {
    /// Whether the calling code runs on one of `group`'s event loops.
    private static func onLoop(of group: any EventLoopGroup) -> Bool {
        group.makeIterator().contains { $0.inEventLoop }
    }

    /// A collected exchange whose every progress call (made on the connection's event loop) is checked against
    /// `group`; returns the body and whether every call was on one of the group's loops.
    private static func collect(
        _ url: URL, on transport: NIOTransport, group: any EventLoopGroup
    ) async throws -> (body: Data, onGroup: Bool, calls: Int) {
        let seen = Locked((calls: 0, offGroup: 0))
        let response = try await transport.collect(
            TransportRequest(method: "GET", url: url), cancellation: ExchangeCancellation(),
            activity: {
                let on = onLoop(of: group)
                seen.withLock {
                    $0.calls += 1
                    if !on { $0.offGroup += 1 }
                }
            })
        let body = try await gather(response.body)
        let (calls, offGroup) = seen.withLock { ($0.calls, $0.offGroup) }
        return (body, offGroup == 0, calls)
    }

    private static func gather(_ body: DataChunks) async throws -> Data {
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        return data
    }

    /// The group still runs tasks, then shuts down cleanly.
    private static func expectGroupStillWorks(_ group: MultiThreadedEventLoopGroup) async throws {
        #expect(try await group.next().submit { 42 }.get() == 42)
        #expect(try await group.next().scheduleTask(in: .milliseconds(1)) { 7 }.futureResult.get() == 7)
        try await group.shutdownGracefully()
    }

    @Test(
        "On a caller's group, collected exchanges run there on both paths, and the group outlives the transport",
        arguments: [true, false])
    func givenGroup(ownConnections: Bool) async throws {
        let server = try await FaultServer.start(.countingConnections)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = ownConnections
        let transport = NIOTransport(configuration: configuration, eventLoopGroup: group)
        for _ in 0..<3 {
            let (body, onGroup, calls) = try await Self.collect(server.baseURL, on: transport, group: group)
            #expect(body == Data("hello".utf8))
            #expect(calls > 0)
            #expect(onGroup)
        }
        // Streamed, through AsyncHTTPClient's client on the same group.
        let streamed = try await transport.send(TransportRequest(method: "GET", url: server.baseURL))
        #expect(try await Self.gather(streamed.body) == Data("hello".utf8))
        await transport.shutdown()
        try await Self.expectGroupStillWorks(group)
        try await server.stop()
    }

    @Test("On a caller's group, a WebSocket's channel runs there, and the group outlives the transport")
    func givenGroupWebSocket() async throws {
        let server = try await WebSocketServer.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let transport = NIOTransport(eventLoopGroup: group)
        let opened = try await transport.openWebSocket(
            TransportRequest(method: "GET", url: server.url), configuration: WebSocketConfiguration())
        let connection = try #require(opened as? NIOWebSocketConnection)
        let loop = connection.channel.eventLoop
        #expect(group.makeIterator().contains { $0 === loop })
        try await connection.send(.string("ping me"))
        #expect(try await connection.receive() == .string("ping me"))
        await connection.close(code: .normalClosure, reason: "")
        await transport.shutdown()
        try await Self.expectGroupStillWorks(group)
        try await server.stop()
    }

    @Test(
        "Through a caller's HTTPClient: requests use its connections, and it still works after the transport's shutdown"
    )
    func givenClient() async throws {
        let server = try await FaultServer.start(.countingConnections)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        // The caller's client counts the connections it opens, so the test sees that the transport used it.
        let opened = Locked(0)
        var settings = HTTPClient.Configuration(redirectConfiguration: .disallow)
        settings.http1_1ConnectionDebugInitializer = { channel in
            opened.withLock { $0 += 1 }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let client = HTTPClient(eventLoopGroup: group, configuration: settings)
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = false
        let transport = NIOTransport(configuration: configuration, httpClient: client)
        let (body, onGroup, _) = try await Self.collect(server.baseURL, on: transport, group: group)
        #expect(body == Data("hello".utf8))
        #expect(onGroup)
        let streamed = try await transport.send(TransportRequest(method: "GET", url: server.baseURL))
        #expect(try await Self.gather(streamed.body) == Data("hello".utf8))
        #expect(opened.withLock { $0 } >= 1)
        // Courier's own connections, for collected plain `http`, are on the client's group too.
        let own = NIOTransport(httpClient: client)
        let (ownBody, ownOnGroup, _) = try await Self.collect(server.baseURL, on: own, group: group)
        #expect(ownBody == Data("hello".utf8))
        #expect(ownOnGroup)

        await transport.shutdown()
        await own.shutdown()
        let response = try await client.execute(
            HTTPClientRequest(url: server.baseURL.absoluteString), deadline: .now() + .seconds(30))
        #expect(response.status == .ok)
        #expect(try await response.body.collect(upTo: 1024).readableBytes == 5)
        try await client.shutdown()
        try await Self.expectGroupStillWorks(group)
        try await server.stop()
    }

    @Test("https under the default policy goes through a caller's HTTPClient, with the trust roots it was given")
    func givenClientKeepsItsTLSSettings() async throws {
        let chain = try CertificateChain.make(name: "Caller's client")
        let server = try await NginxTLS.start(chainPEM: chain.fullChainPEM, keyPEM: chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(chain.root.der), format: .der)])
        var settings = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        settings.httpVersion = .automatic
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: settings)
        // Own connections on, as by default: the system's roots would refuse this chain.
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = true
        let transport = NIOTransport(configuration: configuration, httpClient: client)
        var status: Int?
        do {
            status = try await transport.collect(
                TransportRequest(method: "GET", url: server.baseURL), cancellation: ExchangeCancellation(),
                activity: {}
            ).statusCode
        } catch {
            Issue.record("the request failed: \(error)")
        }
        #expect(status == 200)
        await transport.shutdown()
        try await client.shutdown()  // also when the request failed: a client released running traps
    }

    @Test(
        "A caller's HTTPClient that follows redirects fails the exchange (-1002) rather than bypass the session's rules",
        arguments: [false, true])
    func givenClientFollowingRedirects(streamed: Bool) async throws {
        let server = try await FaultServer.start(
            .reply(close: false) { head in
                head.hasPrefix("GET /start ")
                    ? Data("HTTP/1.1 302 Found\r\nLocation: /end\r\nContent-Length: 0\r\n\r\n".utf8)
                    : FaultServer.ok()
            })
        // AsyncHTTPClient's default configuration follows redirects.
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = false
        let transport = NIOTransport(configuration: configuration, httpClient: client)
        let request = TransportRequest(method: "GET", url: server.baseURL.appendingPathComponent("start"))
        let error = await #expect(throws: CourierError.self) {
            if streamed {
                _ = try await transport.send(request)
            } else {
                _ = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
            }
        }
        #expect(error?.errorCode == -1002)
        #expect(error?.localizedDescription.contains("redirectConfiguration: .disallow") == true)
        await transport.shutdown()
        try await client.shutdown()
        try await server.stop()
    }
}
