import Foundation
import Testing

/// `courier --retry N` against ``ScriptedServer``: the policy's statuses are retried, each retry is reported on
/// standard error, and the final response is printed.
@Suite(.timeLimit(.minutes(1)))
struct CLIRetryTests {
    @Test func retriesAndReportsEachRetry() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 503, headers: [("Retry-After", "0")], body: "busy"),
            .init(status: 502, body: "bad gateway \u{1B}[31m"), .init(status: 200, body: "finally"),
        ])
        let result = try await CourierProcess.run(["--retry", "3", "--print", "b", server.url("job").absoluteString])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("finally"))
        #expect(server.received.count == 3)
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("courier: ") }
        #expect(lines.count == 2, "stderr: \(result.stderr)")
        #expect(lines.first?.contains("503") == true && lines.first?.contains("(1 of 3)") == true)
        #expect(lines.last?.contains("502") == true && lines.last?.contains("(2 of 3)") == true)
        try await server.stop()
    }

    @Test("A 429 is retried after its Retry-After, as curl's --retry does")
    func tooManyRequestsIsRetriedAfterRetryAfter() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 429, headers: [("Retry-After", "1")], body: "slow down"), .init(status: 200, body: "finally"),
        ])
        let result = try await CourierProcess.run(["--retry", "2", "--print", "b", server.url("job").absoluteString])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("finally"))
        let arrivals = server.received.map(\.at)
        #expect(arrivals.count == 2)
        if arrivals.count == 2 { #expect(arrivals[1] - arrivals[0] >= .milliseconds(950)) }
        #expect(result.stderr.contains("429"), "stderr: \(result.stderr)")
        try await server.stop()
    }

    @Test func backoffCountsAgainstMaxTimeNotTheIdleTimeout() async throws {
        // A 5 s Retry-After under a 3 s idle timeout: the wait is the client's own, not a silent server. (With 2 s and
        // 1 s, a full suite beside it sometimes kept the first answer from arriving within the 1 s: not the claim.)
        let server = try await ScriptedServer.start([
            .init(status: 503, headers: [("Retry-After", "5")], body: "busy"), .init(status: 200, body: "finally"),
        ])
        let result = try await CourierProcess.run(["--retry", "1", "--timeout", "3", server.url("job").absoluteString])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "finally")
        #expect(server.received.count == 2)
        try await server.stop()

        // The same wait past --max-time ends the transfer.
        let limited = try await ScriptedServer.start([
            .init(status: 503, headers: [("Retry-After", "3")], body: "busy"), .init(status: 200, body: "finally"),
        ])
        let stopped = try await CourierProcess.run([
            "--retry", "1", "--max-time", "1", limited.url("job").absoluteString,
        ])
        #expect(stopped.status == 2, "stderr: \(stopped.stderr)")
        #expect(stopped.stderr.contains("did not finish within --max-time 1 s"), "\(stopped.stderr)")
        // The claim is that the retry never goes out. Whether the first request did depends on how fast a loaded
        // machine starts the process inside its 1 s (seen: 0 of them at a load of 8).
        #expect(limited.received.count <= 1)
        try await limited.stop()
    }

    @Test func withoutRetryTheFirstAnswerStands() async throws {
        let server = try await ScriptedServer.start([.init(status: 503), .init(status: 200)])
        let result = try await CourierProcess.run(["--check-status", server.url("job").absoluteString])
        #expect(result.status == 5)
        #expect(server.received.count == 1)
        try await server.stop()
    }

    @Test func aNegativeOrHugeCountIsRefused() async throws {
        for count in ["-1", "101"] {
            let result = try await CourierProcess.run(["--retry", count, "http://127.0.0.1:9/"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("--retry"))
        }
    }
}
