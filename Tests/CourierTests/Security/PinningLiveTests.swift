import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// The security policy enforced by NIOTransport against Debian's nginx on 127.0.0.1, over HTTP/2 and HTTP/1.1.
@Suite(.serialized) struct PinningLiveTests {
    /// A chain for `localhost`/`127.0.0.1` from a private root, valid now.
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Live") } catch { fatalError("certificates: \(error)") }
    }()
    static let otherChain: CertificateChain = {
        do { return try CertificateChain.make(name: "Unrelated") } catch { fatalError("certificates: \(error)") }
    }()

    static let httpVersions: [Bool] = [true, false]

    /// Runs `body` against nginx serving `leaf` with `intermediate` (when given), then stops nginx.
    func withServer(
        leaf: IssuedCertificate, intermediate: CertificateAuthority? = Self.chain.intermediate,
        _ body: (NginxTLS) async throws -> Void
    ) async throws {
        let server = try await NginxTLS.start(
            chainPEM: leaf.pem + (intermediate?.issued.pem ?? ""), keyPEM: leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        try await body(server)
    }

    func transport(http2: Bool) -> NIOTransport {
        var configuration = NIOTransport.Configuration()
        configuration.allowsHTTP2 = http2
        return NIOTransport(configuration: configuration)
    }

    /// A GET through `transport` under `policy`; the body's text on success.
    func get(_ url: URL, _ policy: SecurityPolicy, via transport: NIOTransport) async throws -> (String, String) {
        var request = TransportRequest(method: "GET", url: url)
        request.securityPolicy = policy
        let response = try await transport.send(request)
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        return (response.httpVersion, String(decoding: body, as: UTF8.self))
    }

    /// Asserts `body` fails with -1202 and AFNetworking's description for `host`; returns the reason.
    @discardableResult
    func expectTrustFailure(host: String, _ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            Issue.record("the request passed")
            return nil
        } catch let error as CourierError {
            #expect(error.errorCode == -1202, "\(error)")
            guard case .serverTrustEvaluationFailed(let failedHost, let reason) = error else { return nil }
            #expect(failedHost == host)
            #expect(error.localizedDescription.contains("pretending to be “\(host)”"))
            return reason
        } catch {
            Issue.record("not a CourierError: \(error)")
            return nil
        }
    }

    /// Polls until this process holds no socket to `port` (closing is asynchronous); returns the last count.
    func socketsLeft(toPort port: Int) async -> Int {
        var count = NginxTLS.openSockets(toPort: port)
        for _ in 0..<100 where count != 0 {
            try? await Task.sleep(for: .milliseconds(20))
            count = NginxTLS.openSockets(toPort: port)
        }
        return count
    }

    // MARK: Pins

    @Test(arguments: httpVersions)
    func rightPinPasses(http2: Bool) async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let transport = transport(http2: http2)
            // AFNetworking's private-CA recipe: pin the root, allow the chain the system does not trust.
            var byCertificate = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.root.der])
            byCertificate.allowInvalidCertificates = true
            // And with the root trusted as an extra anchor, pinning the intermediate's key.
            var byKey = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [Self.chain.intermediate.der])
            byKey.additionalTrustedCertificates = [Self.chain.root.der]
            let byHash = try SecurityPolicy(pinnedPublicKeyHashesBase64: [Self.chain.leaf.publicKeyHashBase64])
            var byHashWithAnchor = byHash
            byHashWithAnchor.additionalTrustedCertificates = [Self.chain.root.der]
            for policy in [byCertificate, byKey, byHashWithAnchor] {
                for _ in 0..<3 {  // the first evaluates, the next reuse the pooled connection
                    let (version, text) = try await get(server.baseURL, policy, via: transport)
                    #expect(version == (http2 ? "HTTP/2" : "HTTP/1.1"))
                    #expect(text == (http2 ? "secure HTTP/2.0\n" : "secure HTTP/1.1\n"))
                }
            }
            // The system does not trust the private root, so a hash pin alone fails at step 4.
            await expectTrustFailure(host: "127.0.0.1") { _ = try await get(server.baseURL, byHash, via: transport) }
            await transport.shutdown()
            #expect(await socketsLeft(toPort: server.port) == 0)
        }
    }

    @Test(arguments: httpVersions)
    func wrongPinFailsQuicklyWithoutLeavingSockets(http2: Bool) async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let transport = transport(http2: http2)
            defer { Task { await transport.shutdown() } }
            var policy = SecurityPolicy(
                pinningMode: .publicKey,
                pinnedCertificates: [Self.otherChain.root.der, Self.otherChain.leaf.der])
            policy.allowInvalidCertificates = true
            let started = Date()
            let reason = await expectTrustFailure(host: "127.0.0.1") {
                _ = try await get(server.baseURL, policy, via: transport)
            }
            // Well under AsyncHTTPClient's 10-second connect timeout, which retries would have waited out.
            #expect(Date().timeIntervalSince(started) < 3)
            #expect(reason?.contains("public-key pinning") == true)
            #expect(await socketsLeft(toPort: server.port) == 0)
        }
    }

    @Test func wrongPinThroughTheSessionFailsTheTaskWith1202() async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            defer { manager.invalidate(cancelingTasks: true) }
            var right = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.intermediate.der])
            right.allowInvalidCertificates = true
            try manager.setSecurityPolicy(right)
            let response = try await manager.send("GET", "", serializer: StringResponseSerializer())
            #expect(response.statusCode == 200)
            var wrong = right
            wrong.pinnedCertificates = [Self.otherChain.intermediate.der]
            try manager.setSecurityPolicy(wrong)
            await expectTrustFailure(host: "127.0.0.1") {
                _ = try await manager.send("GET", "", serializer: StringResponseSerializer())
            }
        }
    }

    // MARK: Invalid certificates

    @Test(arguments: httpVersions)
    func expiredLeafFailsUnlessInvalidCertificatesAreAllowed(http2: Bool) async throws {
        let expired = try Self.chain.intermediate.leaf(validity: .expired)
        try await withServer(leaf: expired) { server in
            let transport = transport(http2: http2)
            defer { Task { await transport.shutdown() } }
            var strict = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.root.der])
            strict.additionalTrustedCertificates = [Self.chain.root.der]
            let reason = await expectTrustFailure(host: "127.0.0.1") {
                _ = try await get(server.baseURL, strict, via: transport)
            }
            #expect(reason?.contains("expired") == true)
            // The server does not send the root, and an invalid chain is not built up to it: pin the intermediate.
            var lenient = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [Self.chain.intermediate.der])
            lenient.allowInvalidCertificates = true
            let (_, text) = try await get(server.baseURL, lenient, via: transport)
            #expect(text.hasPrefix("secure"))
        }
    }

    @Test(arguments: httpVersions)
    func wrongHostFailsUnlessDomainNamesAreNotValidated(http2: Bool) async throws {
        let elsewhere = try Self.chain.intermediate.leaf(dnsNames: ["example.test"], ipAddresses: [])
        try await withServer(leaf: elsewhere) { server in
            let transport = transport(http2: http2)
            defer { Task { await transport.shutdown() } }
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.root.der])
            policy.additionalTrustedCertificates = [Self.chain.root.der]
            let reason = await expectTrustFailure(host: "127.0.0.1") {
                _ = try await get(server.baseURL, policy, via: transport)
            }
            #expect(reason?.contains("not valid for “127.0.0.1”") == true)
            policy.validatesDomainName = false
            let (_, text) = try await get(server.baseURL, policy, via: transport)
            #expect(text.hasPrefix("secure"))
        }
    }

    @Test(arguments: httpVersions)
    func selfSignedCertificatePassesOnlyWhenPinned(http2: Bool) async throws {
        let selfSigned = try CertificateAuthority.selfSigned(commonName: "localhost")
        try await withServer(leaf: selfSigned, intermediate: nil) { server in
            let transport = transport(http2: http2)
            defer { Task { await transport.shutdown() } }
            let url = try #require(URL(string: "https://localhost:\(server.port)/"))
            var pinned = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [selfSigned.der])
            pinned.allowInvalidCertificates = true
            let (_, text) = try await get(url, pinned, via: transport)
            #expect(text.hasPrefix("secure"))
            // Not pinned, only allowed: AFNetworking refuses to check a name on a certificate it cannot trust.
            var unpinned = SecurityPolicy.default
            unpinned.allowInvalidCertificates = true
            await expectTrustFailure(host: "localhost") { _ = try await get(url, unpinned, via: transport) }
            // Pinned, but the URL's host is not the certificate's name.
            await expectTrustFailure(host: "127.0.0.1") { _ = try await get(server.baseURL, pinned, via: transport) }
        }
    }

    /// The default policy leaves trust to NIOSSL and the system's roots, which do not include the private root.
    @Test func defaultPolicyRefusesAPrivateRootWith1202() async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            // Failed connections are not retried by default, so the refusal comes at once, not at the connect
            // timeout (30 s here, so a retry would show).
            var configuration = NIOTransport.Configuration()
            configuration.connectTimeout = 30
            let transport = NIOTransport(configuration: configuration)
            defer { Task { await transport.shutdown() } }
            let started = ContinuousClock.now
            let reason = await expectTrustFailure(host: "127.0.0.1") {
                _ = try await get(server.baseURL, .default, via: transport)
            }
            #expect(reason?.contains("CERTIFICATE_VERIFY_FAILED") == true)
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    @Test func extraTrustedRootWithoutPinning() async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let transport = transport(http2: true)
            defer { Task { await transport.shutdown() } }
            var policy = SecurityPolicy.default
            policy.additionalTrustedCertificates = [Self.chain.root.der]
            let (_, text) = try await get(server.baseURL, policy, via: transport)
            #expect(text.hasPrefix("secure"))
            policy.additionalTrustedCertificates = [Self.otherChain.root.der]
            let reason = await expectTrustFailure(host: "127.0.0.1") {
                _ = try await get(server.baseURL, policy, via: transport)
            }
            #expect(reason?.contains("anchor") == true)
        }
    }

    // MARK: Mutual TLS

    /// nginx requires a client certificate from the test CA: 400 without one, 200 with it from PEM or PKCS#12.
    @Test(arguments: httpVersions)
    func clientCertificate(http2: Bool) async throws {
        let client = try Self.chain.intermediate.leaf(commonName: "Courier Client", dnsNames: [], ipAddresses: [])
        let server = try await NginxTLS.start(
            chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM,
            clientCAsPEM: Self.chain.root.issued.pem + Self.chain.intermediate.issued.pem)
        defer { server.stopInBackground() }
        let transport = transport(http2: http2)
        defer { Task { await transport.shutdown() } }
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.root.der])
        policy.allowInvalidCertificates = true
        var request = TransportRequest(method: "GET", url: server.baseURL)
        request.securityPolicy = policy
        #expect(try await transport.send(request).statusCode == 400)  // "No required SSL certificate was sent"

        policy.clientCertificate = try ClientCertificate(
            pemCertificateChain: Data((client.pem + Self.chain.intermediate.issued.pem).utf8),
            privateKey: Data(client.privateKeyPEM.utf8))
        let (_, text) = try await get(server.baseURL, policy, via: transport)
        #expect(text.hasPrefix("secure"))

        let archive = try await pkcs12(client, passphrase: "s3cret")
        policy.clientCertificate = try ClientCertificate(pkcs12: archive, passphrase: "s3cret")
        let (_, again) = try await get(server.baseURL, policy, via: transport)
        #expect(again.hasPrefix("secure"))
        #expect(throws: SecurityPolicyError.self) {
            try ClientCertificate(pkcs12: archive, passphrase: "wrong")
        }
    }

    /// `certificate` and its key as a PKCS#12 archive, made by the openssl command.
    func pkcs12(_ certificate: IssuedCertificate, passphrase: String) async throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-p12-\(UUID())")
        let files = try certificate.write(to: directory, name: "client")
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("client.p12")
        let openssl = try await ChildProcess.run(
            "/usr/bin/openssl",
            [
                "pkcs12", "-export", "-in", files.pem.path, "-inkey", files.key.path, "-out", output.path, "-passout",
                "pass:\(passphrase)",
            ])
        #expect(openssl.status == 0)
        return try Data(contentsOf: output)
    }

    // MARK: Crash regression

    /// 100 rejected handshakes in a row (the probe path): every one -1202, the process alive, no socket left, and
    /// the same transport still serves a trusted request afterwards.
    @Test(arguments: httpVersions)
    func hundredRejectedConnectionsInARow(http2: Bool) async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let transport = transport(http2: http2)
            var wrong = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.otherChain.root.der])
            wrong.allowInvalidCertificates = true
            var failures = 0
            for _ in 0..<100 {
                do {
                    _ = try await get(server.baseURL, wrong, via: transport)
                } catch let error as CourierError where error.errorCode == -1202 {
                    failures += 1
                }
            }
            #expect(failures == 100)
            #expect(await socketsLeft(toPort: server.port) == 0)
            var right = wrong
            right.pinnedCertificates = [Self.chain.root.der]
            let (_, text) = try await get(server.baseURL, right, via: transport)
            #expect(text.hasPrefix("secure"))
            await transport.shutdown()
            #expect(await socketsLeft(toPort: server.port) == 0)
        }
    }

    /// The path that crashed AsyncHTTPClient ("Backing off a connection that is unknown to us?"): a pooled
    /// connection rejected in its connection initializer. A leaf the server does not present is planted as the
    /// accepted one, so every connection AsyncHTTPClient opens is refused there, 100 times in a row.
    @Test(arguments: httpVersions)
    func hundredConnectionsRejectedInTheConnectionInitializer(http2: Bool) async throws {
        try await withServer(leaf: Self.chain.leaf) { server in
            let transport = transport(http2: http2)
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Self.chain.root.der])
            policy.allowInvalidCertificates = true
            var request = TransportRequest(method: "GET", url: server.baseURL)
            request.securityPolicy = policy
            let gate = try #require(try transport.trustGate(for: request))
            var failures = 0
            for _ in 0..<100 {
                gate.accepted.leaves.withLock { $0 = [Self.otherChain.leaf.der] }
                do {
                    _ = try await transport.send(request)
                } catch let error as CourierError {
                    if case .serverTrustEvaluationFailed(_, let reason) = error, reason.contains("other than") {
                        failures += 1
                    } else {
                        Issue.record("unexpected \(error)")
                    }
                }
                #expect(gate.accepted.leaves.withLock { $0.isEmpty })  // forgotten: the next request re-evaluates
            }
            #expect(failures == 100)
            #expect(await socketsLeft(toPort: server.port) == 0)
            let (_, text) = try await get(server.baseURL, policy, via: transport)  // re-evaluated, accepted
            #expect(text.hasPrefix("secure"))
            await transport.shutdown()
            #expect(await socketsLeft(toPort: server.port) == 0)
        }
    }
}
