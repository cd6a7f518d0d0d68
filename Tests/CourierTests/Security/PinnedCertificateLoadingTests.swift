import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// AFNetworking's `policyWithPinningMode:` (pins from the main bundle) in Courier: a policy from a bundle's or a
/// directory's certificates, and a pinning policy that pins nothing refused with a clear error instead of refusing
/// every server.
@Suite struct PinnedCertificateLoadingTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "pinned loading") } catch { fatalError("certificates: \(error)") }
    }()

    private func directory(_ files: [String: Data]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pins-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: directory.appendingPathComponent(name)) }
        return directory
    }

    @Test("A directory's .cer and .pem certificates are pinned; a key file beside them is skipped")
    func fromDirectory() throws {
        let folder = try directory([
            "leaf.cer": Self.chain.leaf.der, "root.pem": Data(Self.chain.root.issued.pem.utf8),
            "key.pem": Data(Self.chain.leaf.privateKeyPEM.utf8), "notes.txt": Data("x".utf8),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = try SecurityPolicy(pinningMode: .certificate, certificatesInDirectory: folder)
        #expect(policy.pinnedCertificates == [Self.chain.leaf.der, Self.chain.root.der])
        #expect(policy.pinningMode == SecurityPolicy.PinningMode.certificate)
    }

    @Test("A bundle's certificates are pinned (a bundle made at test time)")
    func fromBundle() throws {
        let folder = try directory(["leaf.der": Self.chain.leaf.der])
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try #require(Bundle(path: folder.path))
        let resources = try #require(bundle.resourceURL)
        if resources.standardizedFileURL != folder.standardizedFileURL {
            try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
            try Self.chain.leaf.der.write(to: resources.appendingPathComponent("leaf.der"))
        }
        let policy = try SecurityPolicy(pinningMode: .publicKey, certificatesIn: bundle)
        #expect(policy.pinnedCertificates == [Self.chain.leaf.der])
    }

    @Test("Nothing to pin: the policy refuses to be made, and a manager refuses a pinning policy with no pins")
    func nothingToPin() throws {
        let empty = try directory(["readme.txt": Data("no certificates".utf8)])
        defer { try? FileManager.default.removeItem(at: empty) }
        do {
            _ = try SecurityPolicy(pinningMode: .certificate, certificatesInDirectory: empty)
            Issue.record("a policy pinning nothing was made")
        } catch let error as SecurityPolicyError {
            #expect(error == .noPins(searched: empty.path))
            #expect(error.description.contains("would refuse every server"))
        }
        // No pinning: nothing to read, nothing refused.
        #expect(try SecurityPolicy(pinningMode: .none, certificatesInDirectory: empty).pinningMode == SecurityPolicy.PinningMode.none)

        let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.test/"), configuration: .ephemeral)
        do {
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate))
            Issue.record("a policy pinning nothing was set")
        } catch let error as SecurityPolicyError {
            #expect(error == .noPins(searched: nil))
        }
        var keyed = SecurityPolicy(pinningMode: .publicKey)
        keyed.pinnedPublicKeyHashes = [try SecurityPolicy.publicKeyHash(ofCertificate: Self.chain.leaf.der)]
        try manager.setSecurityPolicy(keyed)
        #expect(manager.securityPolicy.pinningMode == SecurityPolicy.PinningMode.publicKey)
        var table = SecurityPolicies()
        table.hostPolicies["pinned.example.test"] = SecurityPolicy(pinningMode: .certificate)
        #expect(throws: SecurityPolicyError.self) { try manager.setSecurityPolicies(table) }
        #expect(manager.securityPolicies.hostPolicies.isEmpty)
        manager.invalidate(cancelingTasks: true)
    }
}
