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
