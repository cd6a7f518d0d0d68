import Foundation
import Testing

@testable import CourierCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The `courier` executable against servers that misbehave on purpose, and against outputs that fail: every run
/// must end, with the right status and a message that names the cause, never a trap.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CLIHostileServerTests {
    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A response with `head` lines (status line first) and `body`.
    static func response(_ head: [String], body: Data = Data()) -> Data {
        Data((head.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    @Test func badTimeLimitsAndPortsAreUsageErrors() async throws {
        for arguments in [
            ["--timeout", "inf"], ["--timeout", "1e300"], ["--timeout", "nan"], ["--max-time", "inf"],
            ["--timeout=-1"],
        ] {
            let result = try await CourierProcess.run(arguments + ["127.0.0.1:1/x"])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(!result.killedBySignal)
            #expect(result.stderr.contains("give a number of seconds greater than 0"), "\(result.stderr)")
        }
        for url in ["http://localhost:70000/", ":70000/x"] {
            let result = try await CourierProcess.run([url])
            #expect(result.status == 1)
            #expect(!result.killedBySignal)
            #expect(result.stderr.contains("the port 70000 is not a number from 1 to 65535"), "\(result.stderr)")
        }
    }

    @Test func maxTimeStopsASlowLorisBody() async throws {
        // One byte a second: the idle timeout never fires, only the overall deadline can stop it.
        let server = try await FaultServer.start(.slowBody(bytes: 1000, every: 0.3))
        defer { Task { try await server.stop() } }
        let started = ContinuousClock.now
        let result = try await CourierProcess.run(["--max-time", "1", server.baseURL.absoluteString], limit: 30)
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("did not finish within --max-time 1 s"), "\(result.stderr)")
        #expect(elapsed < .seconds(5), "\(elapsed)")

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let download = try await CourierProcess.run(
            ["--max-time", "1", "-o", directory.appendingPathComponent("slow").path, server.baseURL.absoluteString],
            limit: 30)
        #expect(download.status == 2, "\(download.stderr)")
        #expect(download.stderr.contains("--max-time 1 s"), "\(download.stderr)")
    }

    @Test func resumingAfterAHugeContentLengthFailsClearly() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part")
        try Data("0123456789".utf8).write(to: file)
        let server = try await FaultServer.start(
            .respond(
                Self.response([
                    "HTTP/1.1 206 Partial Content", "Content-Range: bytes 10-9223372036854775816/*",
                    "Content-Length: 9223372036854775807",
                ]) + Data("abc".utf8), close: true))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run(["-o", file.path, "--continue", server.baseURL.absoluteString])
        #expect(!result.killedBySignal, "\(result.stderr)")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("9223372036854775807"), "\(result.stderr)")
    }

    @Test func anEndlessErrorBodyIsNotReadToTheEnd() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 1 GB announced, 8 KiB sent, and the connection kept open: only the first 4 KiB are wanted.
        let body = Data(repeating: UInt8(ascii: "e"), count: 8192)
        let server = try await FaultServer.start(
            .respond(
                Self.response(["HTTP/1.1 500 Internal Server Error", "Content-Length: 1000000000"], body: body),
                close: false))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run(["-d", server.baseURL.absoluteString], in: directory, limit: 20)
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("download not saved: HTTP 500"))
        #expect(result.stderr.contains(String(repeating: "e", count: 4096)))
        #expect(!result.stderr.contains(String(repeating: "e", count: 4097)))
    }

    @Test func aClosedPipeEndsTheTransferQuietly() async throws {
        // A body that would take hours: only a failed write can end the run early.
        let server = try await FaultServer.start(.slowBody(bytes: 1_000_000, every: 0.01))
        defer { Task { try await server.stop() } }
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let result = try await CourierProcess.run(
            [server.baseURL.absoluteString], limit: 30, stdout: pipe.fileHandleForWriting)
        try? pipe.fileHandleForWriting.close()
        #expect(!result.killedBySignal, "SIGPIPE killed it")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("error"), "\(result.stderr)")
    }

    @Test func aFullDiskIsAnError() async throws {
        let server = try await FaultServer.start(
            .respond(FaultServer.ok(String(repeating: "x", count: 10_000)), close: true))
        defer { Task { try await server.stop() } }
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let result = try await CourierProcess.run([server.baseURL.absoluteString], stdout: full)
        try? full.close()
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write to standard output: No space left on device"), "\(result.stderr)")
    }

    @Test func bodiesToAPipeStayByteExact() async throws {
        let body = Data([0x1B, 0x5B, 0x32, 0x4A, 0x07, 0x00, 0xFF, 0x0D, 0x0A])
        let server = try await FaultServer.start(
            .respond(
                Self.response(
                    ["HTTP/1.1 200 OK", "Content-Type: text/plain", "Content-Length: \(body.count)"], body: body),
                close: true))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run([server.baseURL.absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutData == body)
    }

    @Test func messagesQuotingTheServerAreEscaped() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data("no \u{1B}]0;owned\u{07} here\n".utf8)
        let server = try await FaultServer.start(
            .respond(
                Self.response(["HTTP/1.1 404 Not Found", "Content-Length: \(body.count)"], body: body), close: true))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run(["-d", server.baseURL.absoluteString], in: directory)
        #expect(result.status == 4)
        #expect(result.stderr.contains("no \\x1b]0;owned\\x07 here"), "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"))
    }

    @Test func serverFileNamesLoseControlCharactersAndFolders() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("report.txt")
        try Data("mine".utf8).write(to: existing)
        for (disposition, expected) in [
            ("attachment; filename*=UTF-8''%1B%5B31mred%07%0Aname.txt", "[31mredname.txt"),
            ("attachment; filename*=UTF-8''..%2F..%2Fescaped.txt", "escaped.txt"),
            ("attachment; filename=\"report.txt\"", "report.txt-1"),
        ] {
            let server = try await FaultServer.start(
                .respond(
                    Self.response(
                        ["HTTP/1.1 200 OK", "Content-Disposition: \(disposition)", "Content-Length: 2"],
                        body: Data("ok".utf8)), close: true))
            let result = try await CourierProcess.run(["-d", server.baseURL.absoluteString], in: directory)
            try await server.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("saved \(expected): 2 bytes"), "\(result.stderr)")
            #expect(try Data(contentsOf: directory.appendingPathComponent(expected)) == Data("ok".utf8))
        }
        #expect(try Data(contentsOf: existing) == Data("mine".utf8), "an existing file is never overwritten")
        #expect(!FileManager.default.fileExists(atPath: directory.deletingLastPathComponent().path + "/escaped.txt"))
    }

    @Test func downloadsAskForIdentityAndURLUserInfoIsBasicAuth() async throws {
        let server = try await HeadRecordingServer.start(responding: FaultServer.ok("fine"))
        defer { Task { try await server.stop() } }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let download = try await CourierProcess.run(
            ["-o", directory.appendingPathComponent("f").path, "http://us%40er:p%3Ass@127.0.0.1:\(server.port)/f"])
        #expect(download.status == 0, "\(download.stderr)")
        #expect(server.header("Accept-Encoding") == "identity")
        // "us@er:p:ss" in base64.
        #expect(server.header("Authorization") == "Basic dXNAZXI6cDpzcw==")
        #expect(server.requests.first?.contains("us%40er") == false)

        let chosen = try await CourierProcess.run(
            ["-o", directory.appendingPathComponent("g").path, server.baseURL.absoluteString, "Accept-Encoding:gzip"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(server.header("Accept-Encoding", inRequest: 1) == "gzip")
        #expect(server.header("Authorization", inRequest: 1) == nil)
    }

    @Test func basicAuthDoesNotFollowARedirectToAnotherOrigin() async throws {
        let other = try await HeadRecordingServer.start(responding: FaultServer.ok("other"))
        defer { Task { try await other.stop() } }
        let first = try await HeadRecordingServer.start(
            responding: Self.response([
                "HTTP/1.1 302 Found", "Location: http://127.0.0.1:\(other.port)/landing", "Content-Length: 0",
            ]))
        defer { Task { try await first.stop() } }
        let result = try await CourierProcess.run(["--follow", "--auth", "u:p", first.baseURL.absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "other")
        #expect(first.header("Authorization") == "Basic dTpw")
        #expect(other.requests.count == 1)
        #expect(other.header("Authorization") == nil)
    }

    @Test func digestCredentialsAnswerOnlyTheOriginalOrigin() async throws {
        let other = try await HeadRecordingServer.start(
            responding: Self.response([
                "HTTP/1.1 401 Unauthorized", #"WWW-Authenticate: Digest realm="x", nonce="abc", qop="auth""#,
                "Content-Length: 0",
            ]))
        defer { Task { try await other.stop() } }
        let first = try await HeadRecordingServer.start(
            responding: Self.response([
                "HTTP/1.1 302 Found", "Location: http://127.0.0.1:\(other.port)/landing", "Content-Length: 0",
            ]))
        defer { Task { try await first.stop() } }
        let result = try await CourierProcess.run([
            "--follow", "--auth", "u:p", "--auth-type", "digest", first.baseURL.absoluteString,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(other.requests.count == 1)
        #expect(other.requests.allSatisfy { !$0.lowercased().contains("authorization:") }, "\(other.requests)")
    }

    @Test func digestCredentialsNeverAnswerBasic() async throws {
        let server = try await HeadRecordingServer.start(
            responding: Self.response([
                "HTTP/1.1 401 Unauthorized", #"WWW-Authenticate: Basic realm="x""#, "Content-Length: 0",
            ]))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run([
            "--auth", "u:hunter2", "--auth-type", "digest", server.baseURL.absoluteString,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.count == 1)
        #expect(server.header("Authorization") == nil)
    }

    @Test func aFailedHopIsNamedInTheMessage() async throws {
        // Port 1 on loopback refuses connections.
        let first = try await HeadRecordingServer.start(
            responding: Self.response([
                "HTTP/1.1 302 Found", "Location: http://127.0.0.1:1/gone", "Content-Length: 0",
            ]))
        defer { Task { try await first.stop() } }
        let result = try await CourierProcess.run(["--follow", first.baseURL.absoluteString])
        #expect(result.status == 1)
        #expect(result.stderr.contains("127.0.0.1:1/gone"), "\(result.stderr)")
    }

    @Test func headerItemsWithLineBreaksAreRefused() async throws {
        let result = try await CourierProcess.run(["--offline", ":1/x", "X-A:foo\r\nX-B: evil"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("has a line break or a NUL"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func bigBodiesArePrintedInBoundedMemory() async throws {
        // 128 MiB of text with --pretty=all: it used to be collected whole to be "formatted".
        let size = 128 << 20
        var response = Self.response([
            "HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: \(size)",
        ])
        response.append(Data(repeating: UInt8(ascii: "7"), count: size))
        let server = try await FaultServer.start(.respond(response, close: true))
        defer { Task { try await server.stop() } }
        let sink = try #require(FileHandle(forWritingAtPath: "/dev/null"))
        let result = try await CourierProcess.run(
            ["--pretty=all", server.baseURL.absoluteString], limit: 120, stdout: sink, watchMemory: true)
        try? sink.close()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("larger than 10 MiB"), "\(result.stderr)")
        let peak = try #require(result.peakMemoryKiB)
        #expect(peak < 100 * 1024, "peak RSS \(peak) KiB")
    }
}
