import Foundation
import Testing

@testable import CourierCLI

/// curl's `-w/--write-out FORMAT` and HTTPie's `--meta`: what the transfer took, after the body, from Courier's task
/// metrics.
struct CLIWriteOutTests {
    @Test func writeOutFillsCurlsVariables() async throws {
        let server = try await ScriptedServer.start([.init(status: 201, body: "twelve bytes")])
        let result = try await CourierProcess.run([
            "--print", "b", "-w",
            "\\n%{http_code} %{size_download} %{remote_ip} %{time_connect} %{time_starttransfer} %{time_total} %%\\n",
            server.url("w").absoluteString,
        ])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "twelve bytes")
        let fields = try #require(lines.dropFirst().first).split(separator: " ").map(String.init)
        #expect(fields.count == 7, "stdout: \(result.stdout)")
        guard fields.count == 7 else { return }
        #expect(fields[0] == "201")
        #expect(fields[1] == "12")
        #expect(fields[2] == "127.0.0.1")
        let times = fields[3...5].compactMap(Double.init)
        #expect(times.count == 3)
        #expect(times.allSatisfy { $0 >= 0 && $0 < 30 })
        #expect(times[0] <= times[1] && times[1] <= times[2], "connect ≤ first byte ≤ total: \(times)")
        #expect(fields[6] == "%")
    }

    @Test func anUnknownVariableIsEmptyWithAWarning() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([
            "--print", "", "-w", "[%{nonsense}]", server.url("w").absoluteString,
        ])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "[]")
        #expect(result.stderr.contains("unknown variable %{nonsense}"), "stderr: \(result.stderr)")
    }

    @Test func metaPrintsTheElapsedTimeAndPhasesAfterTheBody() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "body")])
        let result = try await CourierProcess.run(["--print", "b", "--meta", server.url("m").absoluteString])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("body"))
        #expect(result.stdout.contains("Elapsed time: "), "stdout: \(result.stdout)")
        #expect(result.stdout.contains("connected (new connection): "))
        #expect(result.stdout.contains("first byte: "))
        #expect(result.stdout.contains("total: "))
    }
}
