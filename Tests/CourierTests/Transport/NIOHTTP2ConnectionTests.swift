import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP/2 over TLS on ``NIOTransport``'s collected path against nginx: what the server's limits and its `GOAWAY` do
/// to many requests, and when an idle connection is let go. On the transport's own connections by default, on
/// AsyncHTTPClient's in the suite's second run (`Scripts/test.sh`); both must answer every request.
@Suite(.serialized) struct NIOHTTP2ConnectionTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "HTTP/2 connections") } catch {
            fatalError("certificates: \(error)")
        }
    }()

    /// nginx over TLS with the suite's chain; `extra` goes into its server block.
    private func nginx(_ extra: String = "") async throws -> NginxTLS {
        try await NginxTLS.start(
            chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM, extraLocations: extra)
    }

    private func manager(transport: NIOTransport) throws -> HTTPSessionManager {
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy)
        return manager
    }

    private func get(_ count: Int, from server: NginxTLS, with manager: HTTPSessionManager) async throws
        -> [DataResponse<Data?>]
    {
        try await withThrowingTaskGroup(of: DataResponse<Data?>.self) { group in
            for index in 0..<count {
                let url = server.baseURL.appendingPathComponent("r\(index)")
                group.addTask { try await manager.send(URLRequest(url: url), serializer: HTTPResponseSerializer()) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("A server that allows 3 streams at once: 60 concurrent requests are all answered, on one connection")
    func streamLimitIsKept() async throws {
        let server = try await nginx("http2_max_concurrent_streams 3;")
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = try manager(transport: transport)
        let responses = try await get(60, from: server, with: manager)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        #expect(responses.count == 60)
        #expect(responses.allSatisfy { $0.httpVersion == "HTTP/2" && $0.response.statusCode == 200 })
        try await waitUntil { server.accessLog.count == 60 }
        let log = server.accessLog
        // A stream past the limit would have been refused (nginx logs no request for it, and it would have failed).
        #expect(Set(log.map(\.status)) == [200])
        #expect(Set(log.map(\.connection)).count == 1, "connections: \(log.map(\.connection))")
    }

    @Test(
        "A server that sends GOAWAY every 20 requests: 40 concurrent requests are all answered, the refused ones on a new connection"
    )
    func goAwayMovesToANewConnection() async throws {
        let server = try await nginx("keepalive_requests 20;")
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = try manager(transport: transport)
        let responses = try await get(40, from: server, with: manager)
        let after = try await manager.send(
            URLRequest(url: server.baseURL.appendingPathComponent("after")), serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        #expect(responses.count == 40)
        #expect(responses.allSatisfy { $0.response.statusCode == 200 })
        #expect(after.response.statusCode == 200)
        try await waitUntil { server.accessLog.count == 41 }
        let connections = Set(server.accessLog.map(\.connection))
        #expect(connections.count >= 3, "41 requests at 20 per connection: \(server.accessLog.map(\.connection))")
    }

    @Test("An HTTP/2 connection idle past the transport's idle timeout is closed; the next request opens another")
    func idleConnectionIsLetGo() async throws {
        let server = try await nginx()
        defer { server.stopInBackground() }
        var configuration = NIOTransport.Configuration()
        configuration.idleConnectionTimeout = 0.5
        let transport = NIOTransport(configuration: configuration)
        let manager = try manager(transport: transport)
        let first = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        let soon = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        try await Task.sleep(for: .milliseconds(1600))
        let later = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        #expect(first.taskMetrics?.transactionMetrics.last?.isReusedConnection == false)
        #expect(soon.taskMetrics?.transactionMetrics.last?.isReusedConnection == true)
        #expect(later.taskMetrics?.transactionMetrics.last?.isReusedConnection == false)
        try await waitUntil { server.accessLog.count == 3 }
        #expect(Set(server.accessLog.map(\.connection)).count == 2)
    }

    @Test(
        "A server that answers one request per connection: refused requests go out again a bounded number of times, then fail with -1005"
    )
    func refusingServerIsAskedABoundedNumberOfTimes() async throws {
        let server = try await nginx("keepalive_requests 1;")
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = try manager(transport: transport)
        let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for index in 0..<10 {
                let url = server.baseURL.appendingPathComponent("r\(index)")
                group.addTask {
                    do {
                        let response = try await manager.send(
                            URLRequest(url: url), serializer: HTTPResponseSerializer())
                        return .success(response.response.statusCode)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        let answered = results.filter { (try? $0.get()) == 200 }.count
        let lost = results.filter { result in
            guard case .failure(let error) = result, let courierError = error as? CourierError else { return false }
            let code: Int = courierError.errorCode
            return code == -1005
        }.count
        #expect(answered + lost == 10, "every request ends answered or lost: \(results)")
        // Named in the issue itself (a comment is not printed): once, in a full AsyncHTTPClient pass on a loaded
        // machine, one request ended some other way, and the run did not say how.
        for result in results {
            switch result {
            case .success(200): break
            case .failure(let error as CourierError) where error.errorCode == -1005: break
            default: Issue.record("neither answered nor lost: \(result)")
            }
        }
        #expect(answered >= 1)
        // Each request went out at most 1 + refusedStreamAttempts times; nginx read one per connection.
        #expect(server.accessLog.count == answered)
    }

    @Test(
        "Under the default policy, a chain the system does not trust fails with -1202 before any request byte",
        .timeLimit(.minutes(1)))
    func untrustedChainIsRefused() async throws {
        let server = try await nginx()
        defer { server.stopInBackground() }
        let transport = NIOTransport()
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        let error = await #expect(throws: CourierError.self) {
            _ = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        }
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        #expect(error?.errorCode == -1202, "\(String(describing: error))")
        #expect(server.accessLog.isEmpty)
    }
}
