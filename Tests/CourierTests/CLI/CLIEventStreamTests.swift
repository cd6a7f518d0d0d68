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

    @Test func jsonEscapesBidiControls() async throws {
        let data = "a\u{202A}b\u{202E}c\u{2066}d\u{2069}e\u{200E}f\u{200F}g\u{061C}h"
        let server = try await EventStreamServer.start { index, _ in
            index == 0
                ? .events("id: \u{202E}1\nevent: t\u{2067}x\ndata: \(data)\n\n", drop: true)
                : .plain(status: 204, contentType: "text/event-stream", body: "")
        }
        let result = try await CourierProcess.run(["sse", "--json", server.url.absoluteString])
        try await server.stop()
        #expect(
            result.stdout
                == #"{"data":"a\u202ab\u202ec\u2066d\u2069e\u200ef\u200fg\u061ch","event":"t\u2067x","id":"\u202e1"}"#
                + "\n", "\(result.stdout)")
        // Still JSON, which gives back what the server sent.
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String]
        #expect(object?["data"] == data)
    }

    @Test func maxReconnectsStopsAServerThatEndsEveryResponseAtOnce() async throws {
        let server = try await EventStreamServer.start { _, _ in
            .plain(status: 200, contentType: "text/event-stream", body: "retry: 0\ndata: x\n\n")
        }
        // Today's code reconnected without a pause and without end: killed at the limit.
        let result = try await CourierProcess.run(
            ["sse", "--max-reconnects", "2", server.url.absoluteString], limit: 20)
        let received = server.received
        try await server.stop()
        #expect(!result.killedBySignal)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(received.count == 3)
        #expect(result.stdout == String(repeating: "data: x\n\n", count: 3))
    }

    @Test func plainBlocksAreEscaped() async throws {
        let server = try await Self.server()
        let result = try await CourierProcess.run(["sse", server.url.absoluteString])
        try await server.stop()
        #expect(result.stdout == "id: 1\ndata: one\n\nid: 2\nevent: update\ndata: two\ndata: lines \\x1b[2J\n\n")
        #expect(!result.stdout.contains("\u{1B}"))
    }
}
