import Foundation
import Testing

@testable import Courier

/// `courier --proxy` and the proxy environment variables, through tinyproxy.
@Suite(.serialized) struct CLIProxyTests {
    @Test func proxyFlagAndEnvironment() async throws {
        let proxy = try await ProxyServer.tinyproxy(user: "alice", password: "s3cret")
        defer { proxy.stop() }
        let origin = try await ScriptedServer.start([.init(status: 200, body: "proxied body")])
        let originPort = origin.baseURL.port ?? 0
        let proxyURL = "http://alice:s3cret@127.0.0.1:\(proxy.port)"

        let flagged = try await CourierProcess.run(["--proxy", proxyURL, origin.url("flag").absoluteString])
        #expect(flagged.status == 0, "\(flagged.stderr)")
        #expect(flagged.stdout == "proxied body")
        #expect(proxy.lines(mentioning: "CONNECT 127.0.0.1:\(originPort)").count == 1, "\(proxy.log)")

        let fromEnvironment = try await CourierProcess.run(
            [origin.url("environment").absoluteString], environment: ["http_proxy": proxyURL])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        #expect(proxy.lines(mentioning: "CONNECT 127.0.0.1:\(originPort)").count == 2, "\(proxy.log)")

        let bypassed = try await CourierProcess.run(
            [origin.url("bypassed").absoluteString], environment: ["http_proxy": proxyURL, "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        #expect(proxy.lines(mentioning: "CONNECT 127.0.0.1:\(originPort)").count == 2, "\(proxy.log)")
        #expect(origin.received.map(\.path) == ["/flag", "/environment", "/bypassed"])

        let refused = try await CourierProcess.run([
            "--proxy", "http://alice:topsecret@127.0.0.1:\(proxy.port)", origin.url("refused").absoluteString,
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the proxy 127.0.0.1:\(proxy.port) failed"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("topsecret"))

        let malformed = try await CourierProcess.run(["--proxy", "ftp://bob:hunter2@x", "http://127.0.0.1:1/"])
        #expect(malformed.status == 1)
        #expect(malformed.stderr.contains("is not a proxy URL") && !malformed.stderr.contains("hunter2"))
        try await origin.stop()
    }
}
