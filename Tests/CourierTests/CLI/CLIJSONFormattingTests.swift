import Foundation
import Testing

@testable import CourierCLI

/// JSON bodies are checked and formatted by a tokenizer fed in chunks, never as an object graph: the output stays
/// within a few times the input whatever the nesting, text that is not JSON is printed as it came, and a large
/// document costs little more memory than its own bytes.
@Suite(.serialized, .timeLimit(.minutes(5)), .cpuBound)
struct CLIJSONFormattingTests {
    /// A `200` with `Content-Type: application/json` and `body`, then the connection closed.
    static func json(_ body: Data) -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    /// A compact document of `count` records and its expected formatting, built side by side (no formatter).
    static func records(_ count: Int) -> (compact: String, formatted: String) {
        var compact = "["
        var formatted = "[\n"
        for index in 0..<count {
            let comma = index + 1 < count ? "," : ""
            compact +=
                #"{"id":\#(index),"name":"n\"\#(index)\u00e9","score":-1.5e3,"tags":["a",true,null],"e":{}}"#
                + comma
            formatted += """
                    {
                        "id": \(index),
                        "name": "n\\"\(index)\\u00e9",
                        "score": -1.5e3,
                        "tags": [
                            "a",
                            true,
                            null
                        ],
                        "e": {}
                    }\(comma)

                """
        }
        return (compact + "]", formatted + "]")
    }

    @Test func chunksOfAnySizeFormatAsTheWholeDocument() throws {
        // About 900 KB: large enough that every piece boundary falls inside tokens of every kind.
        let (compact, expected) = Self.records(9_000)
        let data = Data(compact.utf8)
        #expect(JSONFormatter.format(data, reformat: true, style: Style(enabled: false)) == expected)
        for size in [1, 7, 4096, 65_537] {
            var formatter = JSONFormatter(reformat: true, style: Style(enabled: false))
            var output: [UInt8] = []
            var largest = 0
            var start = 0
            while start < data.count {
                let end = min(start + size, data.count)
                try formatter.feed(data[start..<end])
                largest = max(largest, formatter.outputCount)
                output += formatter.takeOutput()
                start = end
            }
            try formatter.finish()
            output += formatter.takeOutput()
            #expect(String(decoding: output, as: UTF8.self) == expected, "chunks of \(size)")
            // What waits to be taken is what one chunk made, never the document.
            #expect(largest <= 4 * size + JSONFormatter.addedBytesAllowance, "chunks of \(size): \(largest) held")
        }
    }

    @Test func invalidJSONIsRefusedAtAnyChunkSize() throws {
        for text in [
            #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, "01", "1.", "-", "tru", "nul1", #""a\x""#, "\"a\u{01}\"", "[",
            "[]]", "{}{}", "", "  ", #"{"a":[}"#, #"["\u12G4"]"#, "1e+", "[1,]",
        ] {
            #expect(
                JSONFormatter.format(Data(text.utf8), reformat: true, style: Style(enabled: false)) == nil, "\(text)")
            #expect(!JSONFormatter.isValid(Data(text.utf8).map { Data([$0]) }), "\(text) byte by byte")
        }
        for text in ["0", "-0.5E-7", "\"\"", " true ", "[[], {}]", #"{"a":{"b":[1,{"c":null}]}}"#] {
            #expect(JSONFormatter.isValid(Data(text.utf8).map { Data([$0]) }), "\(text) byte by byte")
        }
    }

    @Test func deepAndWideJSONStaysWithinAFewTimesItsSize() async throws {
        // 31 levels, then an array of 300,000 ones: every `1,` used to get a line indented by 128 spaces (and its
        // colour codes), 70 times the input.
        let document =
            String(repeating: #"{"k":"#, count: 16) + String(repeating: "[", count: 16)
            + Array(repeating: "1", count: 300_000).joined(separator: ",") + String(repeating: "]", count: 16)
            + String(repeating: "}", count: 16)
        let body = Data(document.utf8)
        let server = try await FaultServer.start(.respond(Self.json(body), close: true))
        defer { Task { try await server.stop() } }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-json-\(UUID())")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let sink = try FileHandle(forWritingTo: output)
        let result = try await CourierProcess.run(
            ["--pretty=all", server.baseURL.absoluteString], limit: 120, stdout: sink)
        try? sink.close()
        #expect(result.status == 0, "\(result.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int ?? 0
        // What formatting may add: 3 bytes a byte read plus 64 KiB; 5 times is that with room to spare.
        #expect(size <= 5 * body.count, "\(size) bytes printed for \(body.count)")
        let printed = try Data(contentsOf: output)
        let stripped = String(decoding: printed, as: UTF8.self).replacingOccurrences(
            of: "\u{1B}\\[[0-9]+m", with: "", options: .regularExpression
        ).filter { !$0.isWhitespace }
        #expect(stripped == document, "the tokens are all there, in order")
    }

    @Test func invalidJSONIsPrintedAsItCame() async throws {
        for text in [#"{"a": 1,}"#, "[[[1, 2", #"{"key": tru}"#] {
            let body = Data(text.utf8)
            let server = try await FaultServer.start(.respond(Self.json(body), close: true))
            let result = try await CourierProcess.run(["--pretty=all", server.baseURL.absoluteString])
            try await server.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutData == body, "\(text): \(result.stdout)")
        }
    }

    @Test func aLargeDocumentIsFormattedInLittleMoreThanItsSize() async throws {
        // About 9 MB of small objects (under the 10 MiB limit): an object graph of it took hundreds of MB.
        let (compact, _) = Self.records(105_000)
        let body = Data(compact.utf8)
        #expect(body.count > 8_000_000 && body.count < BodyPrinter.formattingLimit)
        let server = try await FaultServer.start(.respond(Self.json(body), close: true))
        defer { Task { try await server.stop() } }
        let sink = try #require(FileHandle(forWritingAtPath: "/dev/null"))
        let result = try await CourierProcess.run(
            ["--pretty=all", server.baseURL.absoluteString], limit: 180, stdout: sink, watchMemory: true)
        try? sink.close()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("larger than"), "\(result.stderr)")
        let peak = try #require(result.peakMemoryKiB)
        // The body (9 MB, once as received and once collected), the runtime and the network stack; the object
        // graph alone was several hundred MB.
        #expect(peak < 150 * 1024, "peak RSS \(peak) KiB")
    }
}
