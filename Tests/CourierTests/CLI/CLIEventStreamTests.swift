import Foundation
import Testing

/// `courier sse` against ``EventStreamServer``: events printed as they arrive, reconnection with `Last-Event-ID`,
/// and a `204` ending the stream.
@Suite(.timeLimit(.minutes(1)))
struct CLIEventStreamTests {
    static func server() async throws -> EventStreamServer {
        try await EventStreamServer.start { index, _ in
            switch index {
            case 0: .events("retry: 100\nid: 1\ndata: one\n\n", drop: true)
            case 1: .events("id: 2\nevent: update\ndata: two\ndata: lines \u{1B}[2J\n\n", drop: true)
            default: .plain(status: 204, contentType: "text/event-stream", body: "")
            }
        }
    }

    @Test func jsonLinesAcrossReconnections() async throws {
        let server = try await Self.server()
        let result = try await CourierProcess.run(["sse", "--json", server.url.absoluteString])
        let received = server.received
        try await server.stop()
        #expect(result.status != 0)
        #expect(result.stderr.contains("204"), "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                #"{"data":"one","event":"message","id":"1"}"#,
                #"{"data":"two\nlines \u001b[2J","event":"update","id":"2"}"#,
            ], "\(result.stdout)")
        #expect(received.map(\.lastEventID) == [nil, "1", "2"])
    }

    @Test func plainBlocksAreEscaped() async throws {
        let server = try await Self.server()
        let result = try await CourierProcess.run(["sse", server.url.absoluteString])
        try await server.stop()
        #expect(result.stdout == "id: 1\ndata: one\n\nid: 2\nevent: update\ndata: two\ndata: lines \\x1b[2J\n\n")
        #expect(!result.stdout.contains("\u{1B}"))
    }
}
