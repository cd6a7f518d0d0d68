import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier -o`, `-d` and `--continue` against servers that lie about ranges and name files like options, and
/// against outputs nobody reads: a resumed file only grows by the range the server announced and can prove, a
/// server's file name never starts with `-`, and `--max-time` covers opening and writing the output.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CLIDownloadSafetyTests {
    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A `206` with `headers` and `body`, then the connection closed.
    static func partial(_ headers: [String], body: String) -> Data {
        Data((["HTTP/1.1 206 Partial Content"] + headers).joined(separator: "\r\n").utf8) + Data("\r\n\r\n\(body)".utf8)
    }

    @Test func aContentRangeThatDoesNotFitTheFileOrTheBodyIsRefused() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part")
        // The file has 10 bytes, so `--continue` asks for bytes=10-; each answer starts there but lies elsewhere.
        for (headers, body, kept, words) in [
            // Ends past its own total.
            (
                ["Content-Range: bytes 10-19/15", "Content-Length: 10"], "abcdefghij", "",
                "Content-Range: bytes 10-19/15"
            ),
            // Starts after its end.
            (["Content-Range: bytes 10-5/100", "Content-Length: 0"], "", "", "Content-Range: bytes 10-5/100"),
            // Three bytes announced, ten sent with a matching Content-Length.
            (["Content-Range: bytes 10-12/100", "Content-Length: 10"], "abcdefghij", "", "the body 10"),
            // Three bytes announced, ten sent until the connection closes: only the three are appended.
            (["Content-Range: bytes 10-12/100"], "abcdefghij", "abc", "more than the 3 bytes"),
            // Five announced, two sent before the close.
            (["Content-Range: bytes 10-14/*"], "ab", "ab", "after 2 of the 5 bytes"),
        ] {
            try Data("0123456789".utf8).write(to: file)
            let server = try await FaultServer.start(.respond(Self.partial(headers, body: body), close: true))
            let result = try await CourierProcess.run(["-o", file.path, "--continue", server.baseURL.absoluteString])
            try await server.stop()
            #expect(result.status == 1, "\(headers): \(result.stderr)")
            #expect(result.stderr.contains("cannot resume"), "\(headers): \(result.stderr)")
            #expect(result.stderr.contains(words), "\(headers): \(result.stderr)")
            #expect(try String(contentsOf: file, encoding: .utf8) == "0123456789" + kept, "\(headers)")
        }

        // A range that fits is appended.
        try Data("0123456789".utf8).write(to: file)
        let server = try await FaultServer.start(
            .respond(Self.partial(["Content-Range: bytes 10-14/15", "Content-Length: 5"], body: "abcde"), close: true))
        defer { Task { try await server.stop() } }
        let result = try await CourierProcess.run(["-o", file.path, "--continue", server.baseURL.absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "0123456789abcde")
    }

    @Test func serverFileNamesNeverStartWithADash() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let named = try await FaultServer.start(
            .respond(
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"-rf\"\r\nContent-Length: 2\r\n\r\nok"
                        .utf8),
                close: true))
        defer { Task { try await named.stop() } }
        let fromHeader = try await CourierProcess.run(["-d", named.baseURL.absoluteString], in: directory)
        #expect(fromHeader.status == 0, "\(fromHeader.stderr)")
        #expect(fromHeader.stderr.contains("saved _-rf: 2 bytes"), "\(fromHeader.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("_-rf").path))

        // From the URL's last component, percent-decoded by the URL: `--checkpoint-action=exec=sh` for tar.
        let plain = try await FaultServer.start(.respond(FaultServer.ok("ok"), close: true))
        defer { Task { try await plain.stop() } }
        let fromURL = try await CourierProcess.run(
            ["-d", plain.baseURL.absoluteString + "--checkpoint-action=exec=sh"], in: directory)
        #expect(fromURL.status == 0, "\(fromURL.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.sorted() == ["_--checkpoint-action=exec=sh", "_-rf"], "\(names)")
    }

    @Test func maxTimeCoversAFIFONobodyReads() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // 1 MiB: far more than a pipe holds (64 KiB on Linux), so writing blocks when nobody reads.
        let server = try await FaultServer.start(
            .respond(FaultServer.ok(String(repeating: "x", count: 1 << 20)), close: false))
        defer { Task { try await server.stop() } }

        // No reader at all: opening the FIFO would wait for one for ever. The limit of 30 s is the hang this test
        // looks for; the run itself takes about the 1 s of --max-time.
        let unopened = try await CourierProcess.run(
            ["--max-time", "1", "-o", fifo.path, server.baseURL.absoluteString], limit: 30)
        #expect(!unopened.killedBySignal, "still waiting to open the FIFO after 30 s")
        #expect(unopened.status == 2, "\(unopened.stderr)")
        #expect(unopened.stderr.contains("did not finish within --max-time 1 s"), "\(unopened.stderr)")

        // A reader that never reads: the open succeeds, the writes fill the pipe and then wait.
        let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let unread = try await CourierProcess.run(
            ["--max-time", "1", "-o", fifo.path, server.baseURL.absoluteString], limit: 30)
        #expect(!unread.killedBySignal, "still writing to the FIFO after 30 s")
        #expect(unread.status == 2, "\(unread.stderr)")
        #expect(unread.stderr.contains("did not finish within --max-time 1 s"), "\(unread.stderr)")
    }
}
