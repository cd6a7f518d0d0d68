import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP Digest with MD5, SHA-256 and SHA-512-256 and their `-sess` variants (RFC 7616): the RFC's own example, the
/// hash against known values, and a server that offers several challenges and checks each answer with Python's
/// `hashlib`, on both transports.
@Suite struct DigestAlgorithmTests {
    static let unauthorized = HTTPURLResponse(
        url: URL(string: "http://www.example.org/")!, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: [:])!

    @Test("SHA-512/256 gives FIPS 180-4's values (the empty message, abc, 1,000 bytes over several blocks, UTF-8)")
    func sha512Slash256() {
        #expect(SHA512Slash256.hex("") == "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a")
        #expect(SHA512Slash256.hex("abc") == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
        #expect(
            SHA512Slash256.hex(String(repeating: "a", count: 1000))
                == "40eb4a70d4d69815407a9e272f0101cd67e3d11262a4a0bfc087712749c7fb53")
        #expect(SHA512Slash256.hex("Jäsøn") == "5c521afe471b082bed6ee4102557cf80ec745aca1c355b7190025e226ad5a59a")
    }

    /// RFC 7616 §3.9.1: the same request answered with MD5 and with SHA-256.
    @Test(
        "RFC 7616's example: the MD5 and SHA-256 responses it gives",
        arguments: [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
            ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ])
    func rfcExample(algorithm: String, response: String) throws {
        let challenge = AuthenticationChallenge(
            scheme: "Digest",
            parameters: [
                "realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": algorithm,
                "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
                "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
            ], previousFailureCount: 0, response: Self.unauthorized)
        let value = Authentication.authorization(
            for: challenge, credential: Credential(user: "Mufasa", password: "Circle of Life"), method: "GET",
            url: try #require(URL(string: "http://www.example.org/dir/index.html")),
            clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(value.contains("response=\"\(response)\""), "\(value)")
        #expect(value.contains("algorithm=\(algorithm),") || value.hasSuffix("algorithm=\(algorithm)"))
        #expect(value.contains("qop=auth, nc=00000001"))
    }

    @Test("The first Digest challenge with an algorithm Courier has is answered; Basic only when no Digest is")
    func challengeChoice() {
        func chosen(_ fields: [String]) -> String? {
            var headers = HTTPHeaderFields()
            for field in fields { headers.add(name: "WWW-Authenticate", value: field) }
            return Authentication.challenge(
                in: headers, response: Self.unauthorized, previousFailureCount: 0, preferring: [.basic, .digest]
            ).map { "\($0.scheme) \($0.parameters["algorithm"] ?? "")" }
        }
        #expect(
            chosen([#"Digest realm="r", nonce="n", algorithm=SHA-512-256"#, #"Digest realm="r", nonce="n""#])
                == "Digest SHA-512-256")
        #expect(
            chosen([
                #"Basic realm="r", Digest realm="r", nonce="n", algorithm=SHA3-256, Digest realm="r", nonce="m", algorithm=sha-256-SESS"#
            ])
                == "Digest sha-256-SESS")
        #expect(chosen([#"Digest realm="r", nonce="n", algorithm=SHA3-256"#, #"Basic realm="r""#]) == "Basic ")
    }

    /// A server offering the challenges given as arguments (each `ALGORITHM` or `ALGORITHM+userhash`), in order;
    /// it answers 200 with the algorithm used when the client's response checks out with `hashlib`, else 401.
    static let server = #"""
        import hashlib, http.server, os, re, sys, threading, time
        parent = int(sys.argv[1]); offers = sys.argv[2:]
        USER, PASSWORD, REALM, NONCE = "Mufasa", "Circle of Life", "digest@courier.test", "dcd98b7102dd2f0e8b11d0f600bfb0c093"
        HASHES = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}
        def H(algorithm, text): return hashlib.new(HASHES[algorithm], text.encode()).hexdigest()
        def fields(value):
            return {k.lower(): v1 if v1 else v2 for k, v1, v2 in re.findall(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))', value)}
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args): pass
            def do_GET(self):
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Digest "):
                    f = fields(auth[7:]); name = f.get("algorithm", "MD5"); base = name.upper().replace("-SESS", "")
                    sess = name.upper().endswith("-SESS")
                    user = H(base, USER + ":" + REALM) if f.get("userhash") == "true" else USER
                    ha1 = H(base, USER + ":" + REALM + ":" + PASSWORD)
                    if sess: ha1 = H(base, ha1 + ":" + NONCE + ":" + f.get("cnonce", ""))
                    ha2 = H(base, "GET:" + self.path)
                    want = H(base, ":".join([ha1, NONCE, f.get("nc", ""), f.get("cnonce", ""), "auth", ha2]))
                    if f.get("username") == user and f.get("response") == want and f.get("uri") == self.path:
                        body = name.encode()
                        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
                        self.wfile.write(body); return
                self.send_response(401)
                for offer in offers:
                    algorithm, _, extra = offer.partition("+")
                    value = 'Digest realm="%s", qop="auth", nonce="%s", algorithm=%s' % (REALM, NONCE, algorithm)
                    if extra == "userhash": value += ", userhash=true"
                    self.send_header("WWW-Authenticate", value)
                self.send_header("Content-Length", "0"); self.end_headers()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        while True:
            time.sleep(0.3)
            try: os.kill(parent, 0)
            except OSError: break
        """#

    @Test(
        "A server offering several challenges gets the first Courier has, checked by hashlib, on both transports",
        arguments: FaultTransportKind.all,
        [
            (["SHA-512-256", "SHA-256", "MD5"], "SHA-512-256"), (["SHA3-256", "SHA-256-sess", "MD5"], "SHA-256-sess"),
            (["MD5-sess"], "MD5-sess"), (["SHA-256+userhash"], "SHA-256"),
        ])
    func serverOfferingSeveral(_ kind: FaultTransportKind, offer: ([String], String)) async throws {
        let (process, port) = try await PythonServerProcess.start(Self.server, arguments: offer.0)
        defer { process.terminate() }
        var configuration = SessionConfiguration.ephemeral
        configuration.credential = Credential(user: "Mufasa", password: "Circle of Life")
        let manager = HTTPSessionManager(
            baseURL: URL(string: "http://127.0.0.1:\(port)/"), configuration: configuration, transport: kind.make())
        let response = try await manager.send("GET", "dir/index.html?x=1", serializer: HTTPResponseSerializer())
        #expect(String(decoding: response.value ?? Data(), as: UTF8.self) == offer.1)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
    }
}
