import Foundation
import Testing

@testable import CourierCLI

/// curl's `--resolve HOST:PORT:ADDR`, `--connect-to HOST:PORT:HOST2:PORT2` and `--connect-timeout SECONDS`.
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

    @Test func connectToGoesToTheOtherHostAndPortAndKeepsTheURLsHost() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, body: "routed"), .init(status: 200, body: "again"),
        ])
        let port = try #require(server.baseURL.port)
        // Nothing listens on port 80 here, and `.test` names never resolve: only the rule reaches the server.
        let result = try await CourierProcess.run([
            "--connect-to", "other.test::127.0.0.2:", "--connect-to", "api.example.test:80:127.0.0.1:\(port)",
            "http://api.example.test/me",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("routed"))
        #expect(server.received.first?.headers["host"] == "api.example.test")
        // An empty target host keeps the URL's, which --resolve then gives the address of (as in curl).
        let resolved = try await CourierProcess.run([
            "--connect-to", "::api.example.test:\(port)", "--resolve", "api.example.test:\(port):127.0.0.1",
            "http://api.example.test:8080/again",
        ])
        #expect(resolved.status == 0, "stderr: \(resolved.stderr)")
        #expect(resolved.stdout.contains("again"))
        #expect(server.received.last?.headers["host"] == "api.example.test:8080")
        try await server.stop()
    }

    @Test func connectToParsesCurlsForms() throws {
        let full = try ConnectToRule("API.example.test:443:[::1]:8443").route
        #expect(full.host == "api.example.test" && full.port == 443)
        #expect(full.targetHost == "::1" && full.targetPort == 8443)
        let any = try ConnectToRule(":::").route
        #expect(any.host == nil && any.port == nil && any.targetHost == nil && any.targetPort == nil)
        let v6 = try ConnectToRule("[::1]:80:backend.test:").route
        #expect(v6.host == "::1" && v6.targetHost == "backend.test" && v6.targetPort == nil)
    }

    @Test(arguments: [
        "api.example.test", "api.example.test:80:127.0.0.1", "api.example.test:0:127.0.0.1:80",
        "api.example.test:80:127.0.0.1:70000", "a:http::", "[::1:80::", "a:80:b:80:c", "a b:80::", "a:80:\u{1B}[31m:",
    ])
    func aMalformedConnectToIsRefused(rule: String) async throws {
        let result = try await CourierProcess.run(["--connect-to", rule, "http://api.example.test/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--connect-to"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("use HOST:PORT:HOST2:PORT2"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"), "stderr: \(result.stderr)")
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

    @Test func connectTimeoutGivesUpOnAHostThatNeverAnswers() async throws {
        let silent = try await OffPool.run { try SilentPort() }
        let started = ContinuousClock.now
        let result = try await CourierProcess.run(["--connect-timeout", "1", silent.baseURL.absoluteString], limit: 30)
        let took = ContinuousClock.now - started
        withExtendedLifetime(silent) {}
        #expect(result.status != 0)
        #expect(!result.killedBySignal)
        // Well before the default 10 s, which would also end it.
        #expect(took < .seconds(6), "took \(took)")
        #expect(result.stderr.contains("timed out"), "stderr: \(result.stderr)")
    }
}
