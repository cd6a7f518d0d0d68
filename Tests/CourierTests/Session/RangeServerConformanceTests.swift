import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// ``RangeServer`` re-implements nginx's rules for ranges and conditions, and most download, resume, caching and
/// streaming tests trust it. Here the two answer the same requests for the same file and must agree on the status,
/// `Content-Range` and body, so a rule the fake gets wrong fails here rather than hiding in every test that uses it.
///
/// nginx is reached over `https` with a certificate made at test time, which only ``NIOTransport`` can trust on
/// Linux (see ``DowngradeRedirectTests``); what is compared is the servers, not the transport.
@Suite("RangeServer answers as nginx does", .timeLimit(.minutes(2)))
struct RangeServerConformanceTests {
    struct Answer: Equatable {
        var status: Int
        var contentRange: String?
        var body: Data
    }

    @Test func rangesAndConditionsAsNginx() async throws {
        let body = TestBytes.periodic(count: 50_000) { UInt8(truncatingIfNeeded: $0 &* 13) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-range-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body.write(to: directory.appendingPathComponent("file"))
        let chain = try CertificateChain.make(name: "RangeConformance")
        let nginx = try await NginxTLS.start(
            chainPEM: chain.fullChainPEM, keyPEM: chain.leaf.privateKeyPEM,
            extraLocations: """
                location = /file { alias \(directory.path)/file; default_type application/octet-stream; }
                """)
        defer { nginx.stopInBackground() }
        let transport = NIOTransport()
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [chain.root.der]
        let nginxFile = nginx.baseURL.appendingPathComponent("file")

        func answer(_ url: URL, _ headers: HTTPHeaderFields) async throws -> (Answer, entityTag: String?) {
            var request = TransportRequest(method: "GET", url: url, headers: headers)
            if url.scheme == "https" { request.securityPolicy = policy }
            let response = try await transport.send(request)
            var received = Data()
            for try await chunk in response.body { received.append(chunk) }
            let answer = Answer(
                status: response.statusCode, contentRange: response.headers["Content-Range"], body: received)
            return (answer, response.headers["ETag"])
        }

        let (whole, nginxTag) = try await answer(nginxFile, HTTPHeaderFields())
        let entityTag = try #require(nginxTag)
        #expect(whole == Answer(status: 200, contentRange: nil, body: body))
        let fake = try await RangeServer.start(body, entityTag: entityTag)
        let cases: [(String, HTTPHeaderFields)] = [
            ("no range", HTTPHeaderFields()),
            ("from the start", ["Range": "bytes=0-"]),
            ("the missing part", ["Range": "bytes=20000-"]),
            ("the last byte", ["Range": "bytes=49999-"]),
            ("past the end", ["Range": "bytes=50000-"]),
            ("If-Range that matches", ["Range": "bytes=20000-", "If-Range": entityTag]),
            ("If-Range that does not", ["Range": "bytes=20000-", "If-Range": "\"other\""]),
            ("If-None-Match that matches", ["If-None-Match": entityTag]),
            ("If-None-Match that does not", ["If-None-Match": "\"other\""]),
        ]
        for (name, headers) in cases {
            let expected = try await answer(nginxFile, headers).0
            let got = try await answer(fake.fileURL, headers).0
            #expect(got.status == expected.status, "\(name)")
            #expect(got.contentRange == expected.contentRange, "\(name)")
            // nginx adds an HTML page to its 416; the body matters only where it is the resource's.
            if (200..<300).contains(expected.status) {
                #expect(got.body == expected.body, "\(name): \(got.body.count) bytes, nginx \(expected.body.count)")
            }
        }
        try await fake.stop()
        await transport.shutdown()
    }
}
