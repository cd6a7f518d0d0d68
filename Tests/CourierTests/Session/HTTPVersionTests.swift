import CourierFixtures
import Foundation
import Testing

@testable import Courier
@testable import CourierCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionConfiguration/httpVersion`` against nginx serving HTTP/2 and HTTP/1.1 over TLS: the version negotiated,
/// where it is reported, and how many connections nginx saw (its access log names each request's connection).
@Suite(.serialized) struct HTTPVersionTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "HTTP Versions") } catch { fatalError("certificates: \(error)") }
    }()

    private func manager(_ version: HTTPVersionPolicy, transport: NIOTransport) throws -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.httpVersion = version
        let manager = HTTPSessionManager(configuration: configuration, transport: transport)
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy)
        return manager
    }

    @Test("automatic negotiates h2, and 20 concurrent requests share one connection")
    func http2Multiplexes() async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = try manager(.automatic, transport: transport)
        let responses = try await withThrowingTaskGroup(of: DataResponse<Data?>.self) { group in
            for index in 0..<20 {
                let url = server.baseURL.appendingPathComponent("r\(index)")
                group.addTask { try await manager.send(URLRequest(url: url), serializer: HTTPResponseSerializer()) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        #expect(responses.count == 20)
        for response in responses {
            #expect(response.httpVersion == "HTTP/2")
            #expect(response.taskMetrics?.transactionMetrics.last?.networkProtocolName == "h2")
            #expect(String(decoding: response.data, as: UTF8.self) == "secure HTTP/2.0\n")
        }
        try await waitUntil { server.accessLog.count == 20 }
        let log = server.accessLog
        #expect(Set(log.map(\.protocol)) == ["HTTP/2.0"])
        #expect(Set(log.map(\.connection)).count == 1, "connections: \(log.map(\.connection))")
    }

    @Test("http1Only keeps TLS connections to HTTP/1.1, also for streamed requests")
    func http1Only() async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = try manager(.http1Only, transport: transport)
        let collected = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        let streamed = try await manager.stream(URLRequest(url: server.baseURL))
        var body = Data()
        for try await chunk in streamed.chunks { body.append(chunk) }
        // The same transport, another session that allows HTTP/2: a connection of its own, with h2.
        let automatic = try self.manager(.automatic, transport: transport)
        let upgraded = try await automatic.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        automatic.invalidate(cancelingTasks: true)
        await transport.shutdown()

        #expect(collected.httpVersion == "HTTP/1.1")
        #expect(collected.taskMetrics?.transactionMetrics.last?.networkProtocolName == "http/1.1")
        #expect(String(decoding: collected.data, as: UTF8.self) == "secure HTTP/1.1\n")
        #expect(streamed.task.httpVersion == "HTTP/1.1")
        #expect(String(decoding: body, as: UTF8.self) == "secure HTTP/1.1\n")
        #expect(upgraded.httpVersion == "HTTP/2")
        try await waitUntil { server.accessLog.count == 3 }
        #expect(server.accessLog.map(\.protocol) == ["HTTP/1.1", "HTTP/1.1", "HTTP/2.0"])
    }

    @Test("URLSessionTransport cannot keep https to HTTP/1.1: a clear -1002, and plain http is unaffected")
    func urlSessionRefusesHTTP1OnlyOverTLS() async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.httpVersion = .http1Only
        let manager = HTTPSessionManager(configuration: configuration, transport: URLSessionTransport())
        let error = await thrownCourierError {
            _ = try await manager.send(
                URLRequest(url: URL(string: "https://127.0.0.1:9/")!), serializer: HTTPResponseSerializer())
        }
        #expect(error?.errorCode == -1002)
        #expect(error?.localizedDescription.contains("HTTP/1.1") == true, "\(String(describing: error))")
        let server = try await ScriptedServer.start([.init(status: 200, body: "plain")])
        let plain = try await manager.send(URLRequest(url: server.url("x")), serializer: HTTPResponseSerializer())
        #expect(plain.data == Data("plain".utf8))
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test("courier --verbose prints the status line with the version negotiated; --http1 keeps to HTTP/1.1")
    func commandLine() async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-versions-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try Self.chain.write(to: directory)
        let url = server.baseURL.absoluteString

        let http2 = try await CourierProcess.run(["--verbose", "--cacert", files.root.path, url])
        #expect(http2.status == 0, "\(http2.stderr)")
        #expect(http2.stderr.contains("\nHTTP/2 200\n"), "\(http2.stderr)")
        #expect(http2.stderr.contains("h2"), "the metrics line names the protocol: \(http2.stderr)")
        #expect(http2.stdout == "secure HTTP/2.0\n")

        let http1 = try await CourierProcess.run(["--verbose", "--http1", "--cacert", files.root.path, url])
        #expect(http1.status == 0, "\(http1.stderr)")
        #expect(http1.stderr.contains("\nHTTP/1.1 200 OK\n"), "\(http1.stderr)")
        #expect(http1.stdout == "secure HTTP/1.1\n")

        let both = try await CourierProcess.run(["--http1", "--http2", url])
        #expect(both.status != 0)

        let version = try await CourierProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("courier \(DefaultHeaders.courierVersion)"))
        #expect(version.stdout.contains("transport NIOTransport"))
    }
}
