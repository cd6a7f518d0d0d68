import Foundation
import Testing

@testable import CourierCLI

/// curl's `--resolve HOST:PORT:ADDR` and `--connect-timeout SECONDS`.
struct CLIConnectionOptionsTests {
    @Test func resolveConnectsToTheAddressAndKeepsTheHostName() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "resolved")])
        let port = try #require(server.baseURL.port)
        let result = try await CourierProcess.run([
            "--resolve", "api.example.test:\(port):127.0.0.1", "http://api.example.test:\(port)/me",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("resolved"))
        #expect(server.received.first?.headers["host"] == "api.example.test:\(port)")
        try await server.stop()
    }

    @Test func aRuleForAnotherPortDoesNotApply() {
        let rules = [try? ResolveRule("api.example.test:8443:10.0.0.7")].compactMap { $0 }
        #expect(
            ResolveRule.hostAddresses(rules, for: URL(string: "https://api.example.test:8443/")) == [
                "api.example.test": "10.0.0.7"
            ])
        #expect(ResolveRule.hostAddresses(rules, for: URL(string: "https://api.example.test/")).isEmpty)
        #expect(ResolveRule.hostAddresses(rules, for: URL(string: "https://other.test:8443/")).isEmpty)
        let v6 = try? ResolveRule("API.example.test:443:[::1]")
        #expect(v6?.address == "::1" && v6?.host == "api.example.test")
    }

    @Test(arguments: [
        "api.example.test", "api.example.test:80", ":80:127.0.0.1", "api.example.test:0:127.0.0.1",
        "api.example.test:70000:127.0.0.1", "api.example.test:80:not-an-address", "api.example.test:http:127.0.0.1",
    ])
    func aMalformedResolveIsRefused(rule: String) async throws {
        let result = try await CourierProcess.run(["--resolve", rule, "http://api.example.test/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--resolve"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("use HOST:PORT:ADDR"), "stderr: \(result.stderr)")
    }

    @Test func connectTimeoutIsCheckedAndApplied() async throws {
        for value in ["0", "-1", "nan"] {
            let refused = try await CourierProcess.run(["--connect-timeout", value, "http://127.0.0.1:9/"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--connect-timeout"), "stderr: \(refused.stderr)")
        }
        let server = try await ScriptedServer.start([.init(status: 200, body: "connected")])
        let result = try await CourierProcess.run(["--connect-timeout", "5", server.url("x").absoluteString])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("connected"))
        try await server.stop()
    }
}
