import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// Loading pins from files, per-host policies, and where a policy is refused.
@Suite struct SecurityPolicyConfigurationTests {
    let fixtures = SecurityFixtures.shared

    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sec-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func certificatesInADirectory() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try fixtures.chain.write(to: directory)  // .pem and .der of each, fullchain.pem, keys
        try Data("ignored".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let found = try SecurityPolicy.certificates(inDirectory: directory)
        #expect(found == [fixtures.chain.leaf.der, fixtures.chain.intermediate.der, fixtures.chain.root.der])
        try Data("garbage".utf8).write(to: directory.appendingPathComponent("bad.cer"))
        #expect(throws: SecurityPolicyError.invalidCertificate("bad.cer")) {
            try SecurityPolicy.certificates(inDirectory: directory)
        }
        #expect(throws: SecurityPolicyError.self) {
            try SecurityPolicy.certificates(inDirectory: directory.appendingPathComponent("missing"))
        }
    }

    /// The digest is the one `openssl … | openssl dgst -sha256 -binary | base64` (curl's recipe) gives.
    @Test func publicKeyHashMatchesOpenSSL() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try fixtures.chain.write(to: directory)
        let openssl = try await ChildProcess.shell(
            "openssl x509 -in '\(files.leaf.path)' -pubkey -noout | openssl pkey -pubin -outform der "
                + "| openssl dgst -sha256 -binary | base64")
        #expect(openssl.status == 0)
        let expected = openssl.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try SecurityPolicy.publicKeyHash(ofCertificate: fixtures.chain.leaf.der).base64EncodedString() == expected)
    }

    @Test func perHostPolicies() throws {
        let pinned = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [fixtures.chain.root.der])
        var policies = SecurityPolicies(hostPolicies: ["pinned.test": pinned])
        let url = { (string: String) in try #require(URL(string: string)) }
        #expect(try policies.policy(for: url("https://pinned.test/a")) == pinned)
        #expect(try policies.policy(for: url("https://other.test/")) == .default)
        #expect(try policies.policy(for: url("http://pinned.test/")) == .default)  // no TLS, nothing to evaluate
        policies.allHostsMustBeEvaluated = true
        #expect(try policies.policy(for: url("https://pinned.test/")) == pinned)
        do {
            _ = try policies.policy(for: url("https://other.test/"))
            Issue.record("an unlisted host passed")
        } catch let error as CourierError {
            #expect(error.errorCode == -1202)
            #expect(
                error.localizedDescription
                    == "The certificate for this server is invalid. You might be connecting to a server that is "
                    + "pretending to be “other.test” which could put your confidential information at risk.")
        }
    }

    /// The session refuses an unlisted https host before the transport is asked (port 9 would refuse the connection).
    @Test func sessionRefusesAnUnlistedHostWhenAllHostsMustBeEvaluated() async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "https://127.0.0.1:9/"))
        defer { manager.invalidate(cancelingTasks: true) }
        try manager.setSecurityPolicies(
            SecurityPolicies(hostPolicies: ["listed.test": .default], allHostsMustBeEvaluated: true))
        do {
            _ = try await manager.send("GET", "x", serializer: HTTPResponseSerializer())
            Issue.record("the request was sent")
        } catch let error as CourierError {
            #expect(error.errorCode == -1202, "\(error)")
        }
    }

    @Test func httpSessionManagerRefusesPinningWithoutAnHTTPSBaseURL() throws {
        let pinned = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [fixtures.chain.leaf.der])
        for base in [nil, URL(string: "http://example.com/api")] {
            let manager = HTTPSessionManager(baseURL: base)
            #expect(throws: SecurityPolicyError.pinningRequiresHTTPSBaseURL(manager.baseURL?.absoluteString)) {
                try manager.setSecurityPolicy(pinned)
            }
            #expect(throws: SecurityPolicyError.self) {
                try manager.setSecurityPolicies(SecurityPolicies(default: pinned))
            }
            #expect(manager.securityPolicy == .default)
            var unpinned = SecurityPolicy.default
            unpinned.additionalTrustedCertificates = [fixtures.chain.root.der]
            try manager.setSecurityPolicy(unpinned)  // AFNetworking refuses pinning only
            #expect(manager.securityPolicy == unpinned)
        }
        let secure = HTTPSessionManager(baseURL: URL(string: "https://example.com/api"))
        try secure.setSecurityPolicy(pinned)
        #expect(secure.securityPolicy == pinned)
        #expect(secure.securityPolicies.defaultPolicy == pinned)
    }

    #if !canImport(Darwin)
        @Test func urlSessionTransportOnLinuxRefusesAPolicyInsteadOfIgnoringIt() async throws {
            let transport = URLSessionTransport()
            defer { Task { await transport.shutdown() } }
            var request = TransportRequest(method: "GET", url: try #require(URL(string: "https://127.0.0.1:9/")))
            request.securityPolicy = SecurityPolicy(
                pinningMode: .certificate, pinnedCertificates: [fixtures.chain.root.der])
            do {
                _ = try await transport.send(request)
                Issue.record("the request was sent")
            } catch let error as CourierError {
                guard case .requestFailed(let underlying, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(underlying as? SecurityPolicyError == .unsupportedByTransport("URLSessionTransport"))
            }
        }
    #endif

    @Test func clientCertificateFromPEM() throws {
        let leaf = fixtures.chain.leaf
        let identity = try ClientCertificate(
            pemCertificateChain: Data(leaf.pem.utf8), privateKey: Data(leaf.privateKeyPEM.utf8))
        let material = try identity.makeNIOSSLIdentity()
        #expect(material.chain.count == 1)
        #expect(throws: SecurityPolicyError.self) {
            try ClientCertificate(pemCertificateChain: Data("nope".utf8), privateKey: Data(leaf.privateKeyPEM.utf8))
        }
    }
}
