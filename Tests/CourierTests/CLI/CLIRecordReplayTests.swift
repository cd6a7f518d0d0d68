import CourierTesting
import Foundation
import Testing

@testable import CourierCLI

/// `courier --record FILE.har` and `courier --replay FILE.har`: a reproducible exchange for a bug report.
struct CLIRecordReplayTests {
    @Test func recordThenReplayWithTheServerGone() async throws {
        let server = try await ScriptedServer.start([
            .init(
                status: 201, headers: [("Content-Type", "application/json"), ("X-Answer", "42")],
                body: #"{"made":true}"#)
        ])
        let url = server.url("items").absoluteString
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorded = try await CourierProcess.run([
            "--record", file.path, "--print", "hb", "POST", url, "name=Ada", "Authorization:Bearer cli-secret",
        ])
        #expect(recorded.status == 0, "stderr: \(recorded.stderr)")
        try await server.stop()
        let archive = try HTTPArchive(contentsOf: file)
        #expect(archive.log.entries.count == 1)
        #expect(archive.log.entries.first?.request.postData?.text == #"{"name":"Ada"}"#)
        #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("cli-secret"))

        let replayed = try await CourierProcess.run(["--replay", file.path, "--print", "hb", "POST", url, "name=Ada"])
        #expect(replayed.status == 0, "stderr: \(replayed.stderr)")
        #expect(replayed.stdout == recorded.stdout)
        // Headers go to stderr when stdout is not a terminal.
        #expect(replayed.stderr.contains("X-Answer: 42"), "stderr: \(replayed.stderr)")
        #expect(replayed.stdout.contains(#""made":true"#), "stdout: \(replayed.stdout)")

        // A request the file does not have fails, saying so.
        let missing = try await CourierProcess.run(["--replay", file.path, "GET", server.url("other").absoluteString])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no recorded exchange"), "stderr: \(missing.stderr)")
    }

    @Test func badFilesAndBothFlagsAreRefused() async throws {
        let both = try await CourierProcess.run(["--record", "a.har", "--replay", "b.har", "http://127.0.0.1:9/"])
        #expect(both.status != 0 && both.stderr.contains("use one"), "stderr: \(both.stderr)")
        let absent = try await CourierProcess.run(["--replay", "/nonexistent/x.har", "http://127.0.0.1:9/"])
        #expect(absent.status != 0 && absent.stderr.contains("--replay"), "stderr: \(absent.stderr)")
        let notHAR = FileManager.default.temporaryDirectory.appendingPathComponent("not-\(UUID()).har")
        try Data("{\"log\": 3}".utf8).write(to: notHAR)
        defer { try? FileManager.default.removeItem(at: notHAR) }
        let wrong = try await CourierProcess.run(["--replay", notHAR.path, "http://127.0.0.1:9/"])
        #expect(wrong.status != 0 && wrong.stderr.contains("not a HAR file"), "stderr: \(wrong.stderr)")
    }
}
