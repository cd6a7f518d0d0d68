import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionHooks/serverTrust`` decides instead of the security policy on NIOTransport, which sees the chain: it is
/// given the host and the DER chain, and its accept, reject and use-the-policy answers are obeyed.
@Suite(.serialized) struct ServerTrustHookTests {
    /// A private root the system does not trust, so the default policy alone refuses the server.
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Hook") } catch { fatalError("certificates: \(error)") }
    }()

    /// A manager whose session hook is `decide` (none when `nil`), against nginx serving the chain.
    private func withManager(
        _ decide: (@Sendable (String, [Data]) -> ServerTrustDisposition)?,
        _ body: (HTTPSessionManager) async throws -> Void
    ) async throws {
        let leaf = Self.chain.leaf
        let server = try await NginxTLS.start(
            chainPEM: leaf.pem + Self.chain.intermediate.issued.pem, keyPEM: leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let manager = HTTPSessionManager(baseURL: server.baseURL, transport: NIOTransport())
        defer { manager.invalidate(cancelingTasks: true) }
        manager.hooks.serverTrust = decide
        try await body(manager)
    }

    @Test("Accept trusts a server the policy would refuse, and the hook sees the host and the chain")
    func acceptOverridesThePolicy() async throws {
        let seen = Locked<(String, [Data])?>(nil)
        try await withManager({ host, chain in
            seen.withLock { $0 = (host, chain) }
            return .accept
        }) { manager in
            let response = try await manager.send("GET", "", serializer: StringResponseSerializer())
            #expect(response.statusCode == 200)
        }
        #expect(seen.value?.0 == "127.0.0.1")
        #expect(seen.value?.1.first == Self.chain.leaf.der)
        #expect(seen.value?.1.count == 2)
    }

    @Test("Reject fails the request with -1202 before anything is sent")
    func rejectFails() async throws {
        try await withManager({ _, _ in .reject }) { manager in
            let error = await #expect(throws: CourierError.self) {
                _ = try await manager.send("GET", "", serializer: StringResponseSerializer())
            }
            #expect(error?.errorCode == -1202)
        }
    }

    @Test("Use-the-policy leaves the decision to the policy, which refuses a private root")
    func useSecurityPolicy() async throws {
        try await withManager({ _, _ in .useSecurityPolicy }) { manager in
            let error = await #expect(throws: CourierError.self) {
                _ = try await manager.send("GET", "", serializer: StringResponseSerializer())
            }
            #expect(error?.errorCode == -1202)
            var policy = SecurityPolicy.default
            policy.additionalTrustedCertificates = [Self.chain.root.der]
            try manager.setSecurityPolicy(policy)
            let response = try await manager.send("GET", "", serializer: StringResponseSerializer())
            #expect(response.statusCode == 200)
        }
    }

    @Test("A request's own hook decides for it alone: its accepted connection never serves a request without it")
    func perRequestHook() async throws {
        try await withManager(nil) { manager in try await checkPerRequestHook(manager) }
    }

    private func checkPerRequestHook(_ manager: HTTPSessionManager) async throws {
        let asked = Locked(0)
        var accepting = TaskHooks()
        accepting.serverTrust = { host, chain in
            asked.withLock { $0 += 1 }
            return host == "127.0.0.1" && chain.first == Self.chain.leaf.der ? .accept : .reject
        }
        let request = try #require(manager.baseURL.map { URLRequest(url: $0) })
        let accepted = try await manager.send(request, serializer: StringResponseSerializer(), hooks: accepting)
        #expect(accepted.statusCode == 200)
        #expect(asked.value >= 1)
        // The same server without the hook: the session's policy refuses the private root, on a connection of its own.
        let error = await #expect(throws: CourierError.self) {
            _ = try await manager.send(request, serializer: StringResponseSerializer())
        }
        #expect(error?.errorCode == -1202)

        // A request's hook that rejects wins over a session policy that trusts the root.
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy)
        #expect(try await manager.send(request, serializer: StringResponseSerializer()).statusCode == 200)
        var rejecting = TaskHooks()
        rejecting.serverTrust = { _, _ in .reject }
        let rejected = await #expect(throws: CourierError.self) {
            _ = try await manager.send(request, serializer: StringResponseSerializer(), hooks: rejecting)
        }
        #expect(rejected?.errorCode == -1202)
    }
}
