import CourierFixtures
import Foundation
import Testing

@testable import CourierCLI

/// `--tls-min`/`--tls-max`, `--cert-key-pass` and a PKCS#12 `--cert` against nginx with certificates made at test
/// time: the version offered is the one negotiated, an encrypted archive opens with its passphrase, and flags that
/// cannot work together are refused before anything is sent.
@Suite(.serialized) struct CLITLSVersionAndPKCS12Tests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "CLI TLS flags") } catch { fatalError("certificates: \(error)") }
    }()

    private func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-flags-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func tlsMaxKeepsTheHandshakeToThatVersion() async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try Self.chain.write(to: folder)
        let capped = try await CourierProcess.run([
            "--verbose", "--cacert", files.root.path, "--tls-max", "1.2", server.baseURL.absoluteString,
        ])
        #expect(capped.status == 0, "stderr: \(capped.stderr)")
        #expect(capped.stderr.contains("TLSv1.2"), "stderr: \(capped.stderr)")
        let newest = try await CourierProcess.run([
            "--verbose", "--cacert", files.root.path, "--tls-min", "tls1.3", server.baseURL.absoluteString,
        ])
        #expect(newest.status == 0, "stderr: \(newest.stderr)")
        #expect(newest.stderr.contains("TLSv1.3"), "stderr: \(newest.stderr)")
    }

    @Test func anEncryptedPKCS12ClientCertificateOpensWithItsPassphrase() async throws {
        let client = try CertificateChain.make(name: "CLI client")
        let server = try await NginxTLS.start(
            chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM,
            clientCAsPEM: client.root.issued.pem + client.intermediate.issued.pem)
        defer { server.stopInBackground() }
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serverFiles = try Self.chain.write(to: folder.appendingPathComponent("server"))
        let clientFiles = try client.write(to: folder.appendingPathComponent("client"))
        let archive = folder.appendingPathComponent("client.p12")
        let openssl = try await ChildProcess.run(
            "/usr/bin/openssl",
            [
                "pkcs12", "-export", "-in", clientFiles.fullChain.path, "-inkey", clientFiles.leafKey.path,
                "-out", archive.path, "-passout", "pass:open sesame",
            ])
        try #require(openssl.status == 0)

        let accepted = try await CourierProcess.run([
            "--cacert", serverFiles.root.path, "--cert", archive.path, "--cert-key-pass", "open sesame",
            server.baseURL.absoluteString,
        ])
        #expect(accepted.status == 0, "stderr: \(accepted.stderr)")
        #expect(accepted.stdout.contains("secure"), "stdout: \(accepted.stdout)")
        let wrongPassphrase = try await CourierProcess.run([
            "--cacert", serverFiles.root.path, "--cert", archive.path, "--cert-key-pass", "nope",
            server.baseURL.absoluteString,
        ])
        #expect(wrongPassphrase.status != 0)
        #expect(wrongPassphrase.stderr.contains("--cert"), "stderr: \(wrongPassphrase.stderr)")
    }

    @Test(arguments: [
        (["--tls-min", "1.3", "--tls-max", "1.2"], "newer than --tls-max"),
        (["--tls-max", "1.4"], "use 1.0, 1.1, 1.2 or 1.3"),
        (["--cert-key-pass", "x"], "--cert-key-pass needs --cert"),
    ])
    func contradictoryFlagsAreRefused(arguments: [String], message: String) async throws {
        let result = try await CourierProcess.run(arguments + ["--offline", "https://127.0.0.1:9/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
    }
}
