import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests through real proxies started by the tests: tinyproxy (Debian; an HTTP proxy with Basic credentials) and
/// pproxy (PyPI; SOCKS5). The proxy's own log shows what it carried; the origin servers show what reached them.
@Suite(.serialized) struct ProxyTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Proxied") } catch { fatalError("certificates: \(error)") }
    }()

    private func manager(
        _ settings: ProxySettings?, transport: any Transport = NIOTransport(), policy: SecurityPolicy? = nil,
        baseURL: URL? = nil
    ) throws -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.proxy = settings
        let manager = HTTPSessionManager(baseURL: baseURL, configuration: configuration, transport: transport)
        var trusting = SecurityPolicy.default
        trusting.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy ?? trusting)
        return manager
    }

    private func get(_ manager: HTTPSessionManager, _ url: URL) async throws -> DataResponse<Data?> {
        try await manager.send(URLRequest(url: url), serializer: HTTPResponseSerializer())
    }

    @Test("HTTP proxy: plain http goes to it, https through CONNECT with the policy checked on the origin's chain")
    func httpProxy() async throws {
        let proxyServer = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { proxyServer.stop() }
        let origin = try await ScriptedServer.start([.init(status: 200, body: "plain origin")])
        let nginx = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { nginx.stopInBackground() }
        let proxy = Proxy(kind: .http, host: "127.0.0.1", port: proxyServer.port, username: "alice", password: "s3cret")
        let transport = NIOTransport()
        let manager = try manager(ProxySettings(all: proxy), transport: transport)

        let plain = try await get(manager, origin.url("via-proxy"))
        #expect(plain.data == Data("plain origin".utf8))
        let originPort = origin.baseURL.port ?? 0
        // NIOTransport tunnels plain http too (AsyncHTTPClient's way): one CONNECT to the origin.
        #expect(proxyServer.lines(mentioning: "CONNECT 127.0.0.1:\(originPort)").count == 1, "\(proxyServer.log)")
        // The credentials were the proxy's: the origin never saw them.
        #expect(origin.received.first?.headers["proxy-authorization"] == nil)

        let secure = try await get(manager, nginx.baseURL)
        #expect(secure.data == Data("secure HTTP/2.0\n".utf8))
        #expect(secure.httpVersion == "HTTP/2")
        #expect(!proxyServer.lines(mentioning: "CONNECT 127.0.0.1:\(nginx.port)").isEmpty, "\(proxyServer.log)")

        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await origin.stop()
    }

    @Test("Pinning through the tunnel: a wrong pin is -1202 and the origin sees no request")
    func pinningThroughTheTunnel() async throws {
        let proxyServer = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { proxyServer.stop() }
        let nginx = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { nginx.stopInBackground() }
        let proxy = Proxy(kind: .http, host: "127.0.0.1", port: proxyServer.port, username: "alice", password: "s3cret")
        let other = try CertificateChain.make(name: "Unrelated")
        var pinned = try SecurityPolicy(pinnedPublicKeyHashesBase64: [other.leaf.publicKeyHashBase64])
        pinned.additionalTrustedCertificates = [Self.chain.root.der]
        let transport = NIOTransport()
        let manager = try manager(
            ProxySettings(all: proxy), transport: transport, policy: pinned, baseURL: nginx.baseURL)
        let error = await thrownCourierError { _ = try await get(manager, nginx.baseURL) }
        #expect(error?.errorCode == -1202, "\(String(describing: error))")
        // The tunnel was opened (the chain came through it) but no request reached nginx.
        #expect(!proxyServer.lines(mentioning: "CONNECT 127.0.0.1:\(nginx.port)").isEmpty, "\(proxyServer.log)")
        #expect(nginx.accessLog.isEmpty)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
    }

    @Test("NO_PROXY hosts go direct; others through the proxy")
    func noProxyBypasses() async throws {
        let proxyServer = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { proxyServer.stop() }
        let origin = try await ScriptedServer.start([.init(status: 200, body: "hello")])
        let originPort = origin.baseURL.port ?? 0
        let proxyURL = "http://alice:s3cret@127.0.0.1:\(proxyServer.port)"
        let transport = NIOTransport()
        let bypassing = try manager(
            ProxySettings.environment(["http_proxy": proxyURL, "NO_PROXY": "example.org,127.0.0.1:\(originPort)"]),
            transport: transport)
        let direct = try await get(bypassing, origin.url("direct"))
        #expect(direct.data == Data("hello".utf8))
        let proxied = try manager(
            ProxySettings.environment(["http_proxy": proxyURL, "NO_PROXY": "127.0.0.1:1"]), transport: transport)
        _ = try await get(proxied, origin.url("proxied"))
        // One tunnel to the origin: the proxied request's; the bypassing one went direct.
        #expect(proxyServer.lines(mentioning: "CONNECT 127.0.0.1:\(originPort)").count == 1, "\(proxyServer.log)")
        #expect(origin.received.map(\.path) == ["/direct", "/proxied"])
        bypassing.invalidate(cancelingTasks: true)
        proxied.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await origin.stop()
    }

    @Test("Missing or wrong proxy credentials are a typed error, over http and through CONNECT")
    func proxyCredentials() async throws {
        let tinyproxy = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { tinyproxy.stop() }
        let origin = try await ScriptedServer.start([.init(status: 200, body: "never")])
        let nginx = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { nginx.stopInBackground() }
        let transport = NIOTransport()
        let alice = { (password: String?) in
            Proxy(
                kind: .http, host: "127.0.0.1", port: tinyproxy.port, username: password.map { _ in "alice" },
                password: password)
        }
        // tinyproxy answers a request without credentials with 407 and, being 1.11, wrong ones with 401. Courier's
        // own tunnel (the trust gate's, for https under a policy) reads both as the proxy's refusal of the
        // credentials (307); AsyncHTTPClient's (plain http) reports any answer but 407 only as a refused tunnel (306).
        let cases: [(Proxy, URL, Int)] = [
            (alice(nil), origin.url("x"), 307), (alice(nil), nginx.baseURL, 307),
            (alice("nope-9f3"), origin.url("y"), 306), (alice("nope-9f3"), nginx.baseURL, 307),
        ]
        for (proxy, url, code) in cases {
            let manager = try manager(ProxySettings(all: proxy), transport: transport)
            let error = await thrownCourierError { _ = try await get(manager, url) }
            guard case .proxyFailed(let named, _, _, _, _) = error else {
                Issue.record("\(proxy) \(url): \(String(describing: error))")
                continue
            }
            #expect(named == "127.0.0.1:\(proxy.port)")
            #expect(error?.errorCode == code, "\(proxy) \(url): \(String(describing: error))")
            #expect(error?.localizedDescription.contains("nope-9f3") == false)  // never the password
            manager.invalidate(cancelingTasks: true)
        }
        #expect(origin.received.isEmpty)
        #expect(nginx.accessLog.isEmpty)
        // A proxy nobody listens on: a proxy failure, not the origin's.
        let refusing = try manager(
            ProxySettings(all: Proxy(kind: .http, host: "127.0.0.1", port: try RefusingPort().port)),
            transport: transport)
        let unreachable = await thrownCourierError { _ = try await get(refusing, origin.url("z")) }
        #expect(unreachable?.errorCode == 306, "\(String(describing: unreachable))")
        refusing.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await origin.stop()
    }

    @Test("SOCKS5: plain http and https through pproxy; credentials for SOCKS5 are refused up front")
    func socks5() async throws {
        let pproxy = try await ProxyServer.pproxy(user: "alice", password: "s3cret")
        defer { pproxy.stop() }
        let origin = try await ScriptedServer.start([.init(status: 200, body: "through socks")])
        let nginx = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { nginx.stopInBackground() }
        let transport = NIOTransport()
        let socks = Proxy(kind: .socks5, host: "127.0.0.1", port: pproxy.socksPort)
        let manager = try manager(ProxySettings(all: socks), transport: transport)
        let plain = try await get(manager, origin.url("s"))
        #expect(plain.data == Data("through socks".utf8))
        let secure = try await get(manager, nginx.baseURL)
        #expect(secure.data == Data("secure HTTP/2.0\n".utf8))
        let originPort = origin.baseURL.port ?? 0
        #expect(
            pproxy.log.contains { $0.hasPrefix("socks5") && $0.hasSuffix("127.0.0.1:\(originPort)") }, "\(pproxy.log)")
        #expect(
            pproxy.log.contains { $0.hasPrefix("socks5") && $0.hasSuffix("127.0.0.1:\(nginx.port)") }, "\(pproxy.log)")

        var withPassword = socks
        (withPassword.username, withPassword.password) = ("alice", "s3cret")
        let refused = try self.manager(ProxySettings(all: withPassword), transport: transport)
        let error = await thrownCourierError { _ = try await get(refused, origin.url("t")) }
        #expect(error?.errorCode == 307, "\(String(describing: error))")
        #expect(origin.received.count == 1)
        manager.invalidate(cancelingTasks: true)
        refused.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await origin.stop()
    }

    @Test("A WebSocket through the HTTP proxy's tunnel")
    func webSocketThroughTheProxy() async throws {
        let proxyServer = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { proxyServer.stop() }
        let server = try await WebSocketServer.start()
        let proxy = Proxy(kind: .http, host: "127.0.0.1", port: proxyServer.port, username: "alice", password: "s3cret")
        var configuration = SessionConfiguration.ephemeral
        configuration.proxy = ProxySettings(all: proxy)
        let manager = SessionManager(configuration: configuration, transport: NIOTransport())
        let socket = manager.webSocketTask(with: URLRequest(url: server.url))
        try await socket.send(.string("tunnelled"))
        #expect(try await socket.receive() == .string("tunnelled"))
        await socket.cancel(with: .normalClosure)
        #expect(!proxyServer.lines(mentioning: "CONNECT 127.0.0.1:\(server.port)").isEmpty, "\(proxyServer.log)")
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("URLSessionTransport goes only where URLSession would: another proxy is a clear -1002")
    func urlSessionTransport() async throws {
        let manager = try manager(
            ProxySettings(all: Proxy(kind: .http, host: "127.0.0.1", port: 3128)), transport: URLSessionTransport())
        let error = await thrownCourierError { _ = try await get(manager, URL(string: "http://127.0.0.1:9/")!) }
        #expect(error?.errorCode == -1002)
        #expect(error?.localizedDescription.contains("NIOTransport") == true)
        manager.invalidate(cancelingTasks: true)
    }
}
