import Foundation
import Testing

@testable import Courier

/// `courier ws` against ``WebSocketServer``: standard input's lines out, messages printed, the exit status by the
/// close.
@Suite(.timeLimit(.minutes(1)))
struct CLIWebSocketTests {
    /// A file holding `text`, as standard input that ends after it.
    static func input(_ text: String) throws -> FileHandle {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ws-input-\(UUID())")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }  // the open handle keeps the contents
        return try FileHandle(forReadingFrom: url)
    }

    @Test func linesOutMessagesPrintedNormalCloseExitsZero() async throws {
        let server = try await WebSocketServer.start()
        let result = try await CourierProcess.run(
            ["ws", server.url.absoluteString], stdin: try Self.input("one\ntwo ✓\nbig 4\n"))
        let closes = server.clientCloses.withLock { $0 }
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "one\ntwo ✓\nAAECAw==\n")
        #expect(closes.first?.code == 1000)
    }

    @Test(
        "At the end of input the echo of every line still comes back from Python's websockets (1,000 lines), then a normal close"
    )
    func endOfInputWaitsForTheEchoes() async throws {
        let server = try await PythonWebSocketServer.start()
        defer { server.stop() }
        let lines = (1...1000).map { "line \($0)" }
        // `--wait` is how long the server may stay quiet before the client takes it as done and closes. Under the
        // whole suite on two cores the Python server once paused longer than 0.5 s between two echoes (991 of 1,000
        // came back, the test alone never missed one), so it gets 2 s here.
        let result = try await CourierProcess.run(
            ["ws", "--wait", "2", server.url.absoluteString],
            stdin: try Self.input(lines.joined(separator: "\n") + "\n"))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == lines.joined(separator: "\n") + "\n")
        let one = try await CourierProcess.run(["ws", server.url.absoluteString], stdin: try Self.input("hello\n"))
        #expect(one.stdout == "hello\n", "stderr: \(one.stderr)")
    }

    @Test func noCloseWaitsForTheServerToClose() async throws {
        let server = try await PythonWebSocketServer.start()
        defer { server.stop() }
        // The server echoes the first line, then closes normally when asked to: the client never closes first.
        let started = ContinuousClock.now
        let result = try await CourierProcess.run(
            ["ws", "-n", "--wait", "0", server.url.absoluteString], stdin: try Self.input("first\nclose 1000 done\n"))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "first\n")
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func anotherCloseExitsNonZeroWithItsCodeAndReason() async throws {
        let server = try await WebSocketServer.start()
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("close 4001 going home\n".utf8))
        let result = try await CourierProcess.run(["ws", server.url.absoluteString], stdin: pipe.fileHandleForReading)
        try? pipe.fileHandleForWriting.close()
        try await server.stop()
        #expect(result.status == 1)
        #expect(result.stderr.contains("4001: going home"), "\(result.stderr)")
    }

    @Test(
        "An invalid close frame or a masked frame exits non-zero with 1002 (1007 for a reason that is not UTF-8)",
        arguments: [
            (HostileWebSocketServer.close(1000, reason: [0x62, 0x79, 0xFF]), "1007"),
            (HostileWebSocketServer.close(5000), "1002"),
            (HostileWebSocketServer.frame(0x8, payload: [0x03]), "1002"),
            (
                HostileWebSocketServer.frame(0x1, payload: Array("hi".utf8), mask: [9, 8, 7, 6])
                    + HostileWebSocketServer.close(1000), "1002"
            ),
        ])
    func protocolErrorsExitNonZero(frames: [UInt8], code: String) async throws {
        let server = try await HostileWebSocketServer.start(act: .write(frames))
        // Standard input stays open: the close is the server's alone.
        let pipe = Pipe()
        let result = try await CourierProcess.run(
            ["ws", server.url.absoluteString], limit: 20, stdin: pipe.fileHandleForReading)
        try? pipe.fileHandleForWriting.close()
        try await server.stop()
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("closed with \(code)"), "\(result.stderr)")
        #expect(result.stdout == "")
    }

    @Test func bidiControlsInMessagesAreEscaped() async throws {
        let server = try await WebSocketServer.start()
        let result = try await CourierProcess.run(
            ["ws", server.url.absoluteString],
            stdin: try Self.input("evil\u{202E}txt.exe \u{2066}x\u{2069}\u{200F}\u{061C}\n"))
        try await server.stop()
        #expect(result.stdout == "evil\\u{202e}txt.exe \\u{2066}x\\u{2069}\\u{200f}\\u{61c}\n", "\(result.stdout)")
    }

    @Test func hexAndAnUnreachableServer() async throws {
        let server = try await WebSocketServer.start()
        let result = try await CourierProcess.run(
            ["ws", "--hex", server.url.absoluteString], stdin: try Self.input("big 3\n"))
        try await server.stop()
        #expect(result.stdout == "000102\n")
        let refused = try await CourierProcess.run(["ws", "ws://127.0.0.1:9/"], stdin: try Self.input(""))
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("127.0.0.1"), "\(refused.stderr)")
    }
}
