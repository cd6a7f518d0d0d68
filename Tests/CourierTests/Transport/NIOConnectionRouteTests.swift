import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// ``NIOTransport/Configuration/connectionRoutes`` (curl's `--connect-to`): the connection goes to the route's
/// host and port on every path that connects, while the request keeps its URL's host for `Host`, SNI and the
/// certificate check.
@Suite(.timeLimit(.minutes(1)))
struct NIOConnectionRouteTests {
    /// The three ways a request goes out: collected on Courier's own connections, collected through
    /// AsyncHTTPClient, streamed through AsyncHTTPClient.
    enum Path: CaseIterable, Sendable {
        case ownPool, clientCollected, clientStreamed
    }

    private static func fetch(_ request: TransportRequest, configuration: NIOTransport.Configuration, path: Path)
        async throws -> (status: Int, body: Data)
    {
        var configuration = configuration
        configuration.usesOwnConnections = path == .ownPool
        let transport = NIOTransport(configuration: configuration)
        do {
            let response =
                path == .clientStreamed
                ? try await transport.send(request)
                : try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
            var data = Data()
            for try await chunk in response.body { data.append(chunk) }
            #expect(response.url == request.url, "the response keeps the request's URL")
            await transport.shutdown()
            return (response.statusCode, data)
        } catch {
            await transport.shutdown()
            throw error
        }
    }

    /// The `Host` field of the server's first request.
    private static func hostField(_ server: FaultServer) throws -> String? {
        let head = try #require(server.requestHeads.first)
        return head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("host:") }
            .map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
    }

    @Test("A route to another host and port: the server gets the request with the URL's host", arguments: Path.allCases)
    func hostAndPort(path: Path) async throws {
        let server = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        // `.test` names never resolve (RFC 6761), and nothing listens on port 80 here: only the route reaches it.
        configuration.connectionRoutes = [
            try #require(NIOTransport.ConnectionRoute(host: "other.test", targetHost: "127.0.0.2")),
            try #require(
                NIOTransport.ConnectionRoute(
                    host: "Courier-Route.test", port: 80, targetHost: "127.0.0.1", targetPort: server.port)),
        ]
        let url = try #require(URL(string: "http://courier-route.test/x"))
        let response = try await Self.fetch(
            TransportRequest(method: "GET", url: url), configuration: configuration, path: path)
        #expect(response.body == Data("hello".utf8))
        #expect(try Self.hostField(server) == "courier-route.test")
        try await server.stop()
    }

    @Test("A route that changes only the port; hostAddresses then applies to the host", arguments: Path.allCases)
    func portOnly(path: Path) async throws {
        let server = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        configuration.connectionRoutes = [
            try #require(NIOTransport.ConnectionRoute(port: 8081, targetPort: server.port))
        ]
        configuration.hostAddresses = ["courier-route.test": "127.0.0.1"]
        let url = try #require(URL(string: "http://courier-route.test:8081/x"))
        let response = try await Self.fetch(
            TransportRequest(method: "GET", url: url), configuration: configuration, path: path)
        #expect(response.body == Data("hello".utf8))
        #expect(try Self.hostField(server) == "courier-route.test:8081")
        try await server.stop()
    }

    @Test("A route for another port leaves the request alone", arguments: Path.allCases)
    func otherPort(path: Path) async throws {
        let server = try await FaultServer.start(.countingConnections)
        let unused = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        configuration.connectionRoutes = [
            try #require(NIOTransport.ConnectionRoute(host: "127.0.0.1", port: unused.port, targetPort: server.port))
        ]
        let response = try await Self.fetch(
            TransportRequest(method: "GET", url: server.baseURL), configuration: configuration, path: path)
        #expect(response.body == Data("hello".utf8))
        #expect(server.requestCount == 1 && unused.requestCount == 0)
        try await unused.stop()
        try await server.stop()
    }

    @Test("A WebSocket follows the route and sends the URL's host")
    func webSocket() async throws {
        let server = try await WebSocketServer.start()
        var configuration = NIOTransport.Configuration()
        configuration.connectionRoutes = [
            try #require(
                NIOTransport.ConnectionRoute(
                    host: "courier-route.test", targetHost: "127.0.0.1", targetPort: server.port))
        ]
        let transport = NIOTransport(configuration: configuration)
        let url = try #require(URL(string: "ws://courier-route.test/socket"))
        let connection = try await transport.openWebSocket(
            TransportRequest(method: "GET", url: url), configuration: WebSocketConfiguration())
        try await connection.send(.string("hi"))
        #expect(try await connection.receive() == .string("hi"))
        #expect(server.upgradeHeaders.withLock { $0.first?.first(name: "Host") } == "courier-route.test")
        await connection.close(code: .normalClosure, reason: "")
        await transport.shutdown()
        try await server.stop()
    }

    static let chain: CertificateChain = {
        do {
            return try CertificateChain.make(hosts: ["courier-route.test"], ipAddresses: [], name: "connection routes")
        } catch { fatalError("certificates: \(error)") }
    }()

    @Test(
        "https: the certificate is checked against the URL's host, not the route's address", arguments: Path.allCases)
    func https(path: Path) async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        var configuration = NIOTransport.Configuration()
        configuration.connectionRoutes = [
            try #require(
                NIOTransport.ConnectionRoute(
                    host: "courier-route.test", port: 443, targetHost: "127.0.0.1", targetPort: server.port))
        ]
        var request = TransportRequest(method: "GET", url: try #require(URL(string: "https://courier-route.test/")))
        request.securityPolicy.additionalTrustedCertificates = [Self.chain.root.der]
        let response = try await Self.fetch(request, configuration: configuration, path: path)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("secure HTTP/"))
        // The leaf names only courier-route.test: a check against the route's 127.0.0.1 would have failed.
    }

    @Test("Ports outside 1...65535 make no route; hosts are compared lower-cased without brackets")
    func values() throws {
        #expect(NIOTransport.ConnectionRoute(port: 0) == nil)
        #expect(NIOTransport.ConnectionRoute(targetPort: 65536) == nil)
        let route = try #require(NIOTransport.ConnectionRoute(host: "[::1]", targetHost: ""))
        #expect(route.host == "::1" && route.targetHost == nil)
        let routes = [try #require(NIOTransport.ConnectionRoute(host: "::1", port: 8080, targetPort: 9090))]
        let target = NIOTransport.ConnectionRoute.target(
            of: try #require(URL(string: "http://[::1]:8080/")), in: routes)
        #expect(target?.host == "::1" && target?.port == 9090)
        #expect(NIOTransport.ConnectionRoute.target(of: try #require(URL(string: "http://[::1]/")), in: routes) == nil)
    }
}
