import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects that lead a request out of TLS: nginx over `https` (with certificates made at test time) sends it to a
/// ``FaultServer`` over plain `http`, both on 127.0.0.1.
///
/// These cases run on ``NIOTransport`` only. On Linux, ``URLSessionTransport`` (FoundationNetworking on libcurl)
/// trusts nothing but the system's CA bundle (`/etc/ssl/certs/ca-certificates.crt`; FoundationNetworking reads no
/// setting or variable naming another one outside Android) and refuses `https` under a non-default
/// ``SecurityPolicy`` (see ``URLSessionTransport/send(_:)``), so it cannot reach a server whose certificate is made at
/// test time without changing the machine's trust store. The decision under test is not the transport's: it is made
/// above it, by ``TaskExchange`` and ``Authentication``, the same code for both transports; the plain-`http` cases
/// of the same rules (cross-origin redirects, credentials at their origin, hooks) run on both in
/// ``HostileServerTests``.
@Suite("Redirects out of TLS", .serialized, .timeLimit(.minutes(2)))
struct DowngradeRedirectTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Downgrade") } catch { fatalError("certificates: \(error)") }
    }()

    static let anyStatus = HTTPResponseSerializer(acceptableStatusCodes: nil)

    /// nginx's extra locations, given the plain server's URL (`http://127.0.0.1:<port>/`):
    /// - `/downgrade`: 302 to the plain server's `/landing`;
    /// - `/stay`: 302 to `/` on the same `https` origin;
    /// - `/login`: a Basic challenge (realm `courier`) without an `Authorization` field, else 302 to the plain
    ///   server's `/after-login`: a request reaches the plain server from here only once it was authorized over TLS.
    static func locations(plain: URL) -> String {
        let base = plain.absoluteString
        return """
            location = /downgrade { return 302 \(base)landing; }
                    location = /stay { return 302 /; }
                    location = /login {
                        if ($http_authorization = "") {
                            add_header WWW-Authenticate 'Basic realm="courier"' always;
                            return 401;
                        }
                        return 302 \(base)after-login;
                    }
            """
    }

    /// Runs `body` with the plain server answering as `plain` says, nginx serving ``locations(plain:)``, and a session
    /// on a new ``NIOTransport`` that trusts the test root, follows `https` → `http` redirects when
    /// `allowsInsecureRedirects`, and has the credential `secret` names (none for the other secrets).
    func withDowngrade(
        plain behaviour: FaultServer.Behaviour, allowsInsecureRedirects: Bool = false, secret: Secret? = nil,
        _ body: (NginxTLS, FaultServer, HTTPSessionManager) async throws -> Void
    ) async throws {
        let plain = try await FaultServer.start(behaviour)
        let nginx: NginxTLS
        do {
            nginx = try await NginxTLS.start(
                chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM,
                extraLocations: Self.locations(plain: plain.baseURL))
        } catch {
            try? await plain.stop()
            throw error
        }
        var configuration = SessionConfiguration.ephemeral
        configuration.allowsInsecureRedirects = allowsInsecureRedirects
        switch secret {
        case .sessionCredential:
            configuration.credential = Credential(user: "user", password: Self.password)
        case .protectionSpaceCredential:
            configuration.credential = Credential(
                user: "user", password: Self.password,
                protectionSpace: .init(scheme: "https", host: "127.0.0.1", port: nginx.port, realm: "courier"))
        case .protectionSpaceAtPlainPort:
            configuration.credential = Credential(
                user: "user", password: Self.password,
                protectionSpace: .init(scheme: "https", host: "127.0.0.1", port: plain.port, realm: "courier"))
        case .authorizationField, nil:
            break
        }
        let transport = NIOTransport()
        let manager = HTTPSessionManager(configuration: configuration, transport: transport)
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        var failure: (any Error)?
        do {
            try manager.setSecurityPolicy(policy)
            try await body(nginx, plain, manager)
        } catch {
            failure = error
        }
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try? await plain.stop()
        nginx.stopInBackground()
        if let failure { throw failure }
    }

    // MARK: Redirects

    @Test("An https → http redirect fails with -1022 and the http server is never reached")
    func downgradeIsRefused() async throws {
        try await withDowngrade(plain: .respond(FaultServer.ok("plain"), close: false)) { nginx, plain, manager in
            let start = nginx.baseURL.appendingPathComponent("downgrade")
            let error = await thrownCourierError {
                try await manager.send(URLRequest(url: start), serializer: Self.anyStatus)
            }
            #expect(error?.errorCode == -1022, "\(String(describing: error))")
            if case .insecureRedirect(let from, let to, _) = error {
                #expect(from.absoluteString == start.absoluteString)
                #expect(to.absoluteString == plain.baseURL.absoluteString + "landing")
            } else {
                Issue.record("not insecureRedirect: \(String(describing: error))")
            }
            #expect(plain.requestCount == 0, "the plain server was reached")
        }
    }

    @Test("With allowsInsecureRedirects an https → http redirect is followed")
    func downgradeIsFollowedWhenAllowed() async throws {
        try await withDowngrade(plain: .respond(FaultServer.ok("plain"), close: false), allowsInsecureRedirects: true) {
            nginx, plain, manager in
            let start = nginx.baseURL.appendingPathComponent("downgrade")
            let response = try await manager.send(URLRequest(url: start), serializer: Self.anyStatus)
            #expect(response.statusCode == 200)
            #expect(response.value.map { String(decoding: $0, as: UTF8.self) } == "plain")
            #expect(response.response.url?.absoluteString == plain.baseURL.absoluteString + "landing")
            #expect(plain.requestCount == 1)
            #expect(plain.requestHeads.first?.hasPrefix("GET /landing ") == true)
        }
    }

    @Test(
        "A redirect hook proposing http after an https request fails with -1022 unless insecure redirects are allowed",
        arguments: [false, true])
    func hookProposingHTTP(allowsInsecureRedirects: Bool) async throws {
        try await withDowngrade(
            plain: .respond(FaultServer.ok("plain"), close: false), allowsInsecureRedirects: allowsInsecureRedirects
        ) { nginx, plain, manager in
            let target = plain.baseURL.appendingPathComponent("hooked")
            // The server's own redirect stays on https: only the hook leaves TLS.
            let proposals = Locked<[String]>([])
            var hooks = manager.hooks
            hooks.willPerformRedirection = { _, _, proposed in
                proposals.withLock { $0.append(proposed.url?.absoluteString ?? "") }
                var next = proposed
                next.url = target
                return next
            }
            manager.hooks = hooks
            let request = URLRequest(url: nginx.baseURL.appendingPathComponent("stay"))
            if allowsInsecureRedirects {
                let response = try await manager.send(request, serializer: Self.anyStatus)
                #expect(response.statusCode == 200)
                #expect(response.value.map { String(decoding: $0, as: UTF8.self) } == "plain")
                #expect(plain.requestCount == 1)
            } else {
                let error = await thrownCourierError { try await manager.send(request, serializer: Self.anyStatus) }
                #expect(error?.errorCode == -1022, "\(String(describing: error))")
                if case .insecureRedirect(_, let to, _) = error {
                    #expect(to.absoluteString == target.absoluteString)
                } else {
                    Issue.record("not insecureRedirect: \(String(describing: error))")
                }
                #expect(plain.requestCount == 0, "the plain server was reached")
            }
            #expect(proposals.withLock { $0 } == [nginx.baseURL.absoluteString])
        }
    }

    // MARK: Credentials

    /// How the `https` request carries its secret.
    enum Secret: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// ``SessionConfiguration/credential`` without a protection space: its origin is the original request's.
        case sessionCredential = "the session's credential"
        /// ``SessionConfiguration/credential`` for nginx's `https` protection space, realm `courier`.
        case protectionSpaceCredential = "a credential for the https protection space"
        /// An `Authorization` field the caller set on the request.
        case authorizationField = "an Authorization field"
        /// ``SessionConfiguration/credential`` for `https` at the plain server's host and port: only the scheme
        /// keeps it from the plain server. nginx does not get it either, so this one starts at `/downgrade` only.
        case protectionSpaceAtPlainPort = "a credential for https at the plain server's host and port"

        var testDescription: String { rawValue }
    }

    static let password = "hunter2-tls-only"

    /// Each secret with the nginx path the task starts at: `login`, where the secret is sent over TLS first (so a
    /// credential has already answered once), and `downgrade`, where the plain server is the first to ask for it.
    static let secretRoutes: [(Secret, String)] = Secret.allCases.flatMap { secret in
        (secret == .protectionSpaceAtPlainPort ? ["downgrade"] : ["login", "downgrade"]).map { (secret, $0) }
    }

    @Test(
        "A secret given for an https request is never sent over http after a followed redirect",
        arguments: secretRoutes)
    func secretNeverCrossesToHTTP(_ secret: Secret, startingAt path: String) async throws {
        // The plain server asks for the same realm's credential, to tempt the session into answering it.
        let challenge = HostileServerTests.response(
            status: "401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"courier\""], body: "who?")
        try await withDowngrade(
            plain: .reply(close: false) { _ in challenge }, allowsInsecureRedirects: true, secret: secret
        ) { nginx, plain, manager in
            var request = URLRequest(url: nginx.baseURL.appendingPathComponent(path))
            if secret == .authorizationField {
                let token = Data("user:\(Self.password)".utf8).base64EncodedString()
                request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
            }
            let response = try await manager.send(request, serializer: Self.anyStatus)
            // nginx redirects `/login` only once authorized: the secret went over TLS, then the redirect was followed.
            #expect(response.statusCode == 401)
            #expect(response.value.map { String(decoding: $0, as: UTF8.self) } == "who?")
            let landing = path == "login" ? "/after-login" : "/landing"
            #expect(plain.requestHeads.first?.hasPrefix("GET \(landing) ") == true)
            // One request, unanswered: a credential sent in reply to the challenge would be a second one.
            #expect(plain.requestCount == 1)
            let heads = plain.requestHeads.joined(separator: "\n")
            #expect(!heads.lowercased().contains("authorization:"), "\(heads)")
            #expect(!heads.contains(Data("user:\(Self.password)".utf8).base64EncodedString()))
            #expect(!heads.contains(Self.password))
        }
    }
}
