import Foundation
import Testing

/// `courier --verbose` prints each exchange's timings on standard error.
@Suite(.timeLimit(.minutes(1)))
struct CLIMetricsTests {
    @Test func verbosePrintsEachExchangeAndTheTotal() async throws {
        let server = try await ScriptedServer.start { _, received in
            received.path == "/start"
                ? .init(status: 302, headers: [("Location", "/end")], body: "moved")
                : .init(status: 200, body: "arrived")
        }
        let result = try await CourierProcess.run(["--verbose", "--follow", server.url("start").absoluteString])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("courier: ") }
        #expect(lines.count == 3, "stderr: \(result.stderr)")
        let first = lines.first.map(String.init) ?? ""
        #expect(first.contains("GET \(server.url("start").absoluteString) → 302"), "\(first)")
        #expect(first.contains("new connection") && first.contains("first byte at") && first.contains("5 bytes"))
        let second = lines.dropFirst().first.map(String.init) ?? ""
        #expect(second.contains("→ 200") && second.contains("reused connection") && second.contains("7 bytes"))
        #expect(second.contains("GET \(server.url("end").absoluteString)"), "\(second)")
        #expect(lines.last?.hasPrefix("courier: 2 exchanges in ") == true)
    }

    @Test func withoutVerboseNothingIsPrinted() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "quiet")])
        let result = try await CourierProcess.run([server.url("q").absoluteString])
        try await server.stop()
        #expect(result.status == 0)
        #expect(!result.stderr.contains("exchange"))
    }
}
