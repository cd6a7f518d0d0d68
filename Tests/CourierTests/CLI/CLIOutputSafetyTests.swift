import Courier
import Foundation
import Testing

@testable import CourierCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What reaches the terminal and the disk from a hostile server, in process: escaping, file names, JSON formatting
/// in linear size, the progress bar's numbers, and the body printer's paths.
@Suite(.cpuBound) struct CLIOutputSafetyTests {
    /// A console whose standard output is (or pretends to be) a terminal.
    func console(_ captured: CLIRunnerTests.Captured, terminal: Bool) -> Console {
        Console(
            stdoutIsTerminal: terminal, stderrIsTerminal: terminal, colorAllowed: false, forceProgress: false,
            writeOut: { captured.append($0, toOut: true) }, writeErr: { captured.append($0, toOut: false) })
    }

    /// `pieces` as a body arriving in those chunks.
    func chunks(_ pieces: [Data]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
    }

    @Test func escapesControlCharactersKeepingLinesAndUTF8AcrossChunks() {
        var escaper = TerminalEscaper()
        // "é" (C3 A9) and "€" (E2 82 AC) are cut between chunks; ESC, BEL, a lone CR, DEL, C1 CSI (C2 9B) and
        // RIGHT-TO-LEFT OVERRIDE (E2 80 AE) are escaped; CRLF, LF and tab are kept.
        let first = Data([0x61, 0x1B, 0x5B, 0x33, 0x31, 0x6D, 0x07, 0xC3])
        let second = Data([0xA9, 0x09, 0x0D, 0x0A, 0x62, 0x0D, 0x63, 0x7F, 0xC2, 0x9B, 0xE2, 0x82])
        let third = Data([0xAC, 0xE2, 0x80, 0xAE, 0xFF, 0x0A, 0x0D])
        var output = escaper.escape(first)
        output += escaper.escape(second)
        output += escaper.escape(third)
        output += escaper.finish()
        #expect(
            String(decoding: output, as: UTF8.self)
                == "a\\x1b[31m\\x07é\t\r\nb\\x0dc\\x7f\\x9b€\\u{202e}\\xff\n\\x0d")
    }

    @Test func stringsFromTheServerAreEscapedOrStripped() {
        #expect(TerminalText.escape("a\u{1B}]0;title\u{07}b\nc") == "a\\x1b]0;title\\x07b\nc")
        #expect(TerminalText.escape("v\r\nX-Injected: 1", keepingLineBreaks: false) == "v\\x0d\\x0aX-Injected: 1")
        #expect(FileDownload.safeName("\u{1B}[31mred\u{07}\nname\u{202E}txt.exe") == "[31mrednametxt.exe")
        #expect(FileDownload.safeName("../../etc/passwd") == "passwd")
        #expect(FileDownload.safeName("..") == nil)
        #expect(FileDownload.safeName("\u{1B}\u{7}") == nil)
        #expect(FileDownload.safeName(String(repeating: "é", count: 300))?.utf8.count == 200)
        #expect(
            FileDownload.fileName(fromContentDisposition: "attachment; filename*=UTF-8''%1B%5B2J%07evil%0A.txt")
                == "[2Jevil.txt")
    }

    @Test func responseHeadsAreEscaped() throws {
        let url = try #require(URL(string: "http://h/"))
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["X-Evil": "a\u{1B}[2Jb\u{9B}c", "X-Plain": "ok"]))
        let head = MessageFormatter.responseHead(response, version: nil, style: Style(enabled: false))
        #expect(head.contains("X-Evil: a\\x1b[2Jb\\x9bc"), "\(head)")
        #expect(!head.contains("\u{1B}"))
        #expect(head.contains("X-Plain: ok"))
    }

    /// `async`, yielding between pieces, so this CPU-bound loop shares the cooperative pool (see ``FuzzTests``).
    @Test func deeplyNestedJSONFormatsToLinearSize() async throws {
        // 500 levels (JSON parsers stop at 512), repeated to about 200 KB.
        let nested = String(repeating: "[", count: 500) + "1" + String(repeating: "]", count: 500)
        let document = "[" + Array(repeating: nested, count: 200).joined(separator: ",") + "]"
        let data = Data(document.utf8)
        #expect(data.count > 200_000)
        var formatter = JSONFormatter(reformat: true, style: Style(enabled: true))
        var size = 0
        var start = 0
        while start < data.count {
            let end = min(start + 16_384, data.count)
            try formatter.feed(data[start..<end])
            size += formatter.takeOutput().count
            start = end
            await Task.yield()
        }
        try formatter.finish()
        size += formatter.takeOutput().count
        #expect(size < 5 * data.count, "\(size) bytes from \(data.count)")
        let text = try #require(JSONFormatter.format(data, reformat: true, style: Style(enabled: false)))
        let lines: [Substring] = text.split(separator: "\n")
        let deepestIndent = lines.map { line -> Int in line.prefix(while: { $0 == " " }).count }.max() ?? 0
        #expect(deepestIndent == JSONFormatter.deepestIndentedLevel * 4)
        #expect(text.filter { !$0.isWhitespace } == document)
    }

    @Test func jsonStringsAreEscapedForATerminal() throws {
        let data = Data("{\"a\":\"x\u{202E}y\u{9B}z\"}".utf8)
        let text = try #require(
            JSONFormatter.format(data, reformat: true, style: Style(enabled: false), escapingControls: true))
        #expect(text == "{\n    \"a\": \"x\\u{202e}y\\x9bz\"\n}")
    }

    @Test func theProgressBarNeverTraps() {
        let hostile = TaskProgress(
            completed: 10, total: .max, throughput: .infinity, estimatedTimeRemaining: 1e300)
        let line = ProgressBar.render(hostile, label: "f", width: 10)
        #expect(line.contains("ETA --:--"), "\(line)")
        #expect(line.contains("[----------]"))
        #expect(ProgressBar.duration(.nan) == "--:--")
        #expect(ProgressBar.duration(.infinity) == "--:--")
        #expect(ProgressBar.duration(360_000) == "--:--")
        #expect(ProgressBar.duration(3_600) == "1:00:00")
        #expect(ProgressBar.clampedInt64(.infinity) == 0)
        #expect(ProgressBar.clampedInt64(.nan) == 0)
        #expect(ProgressBar.clampedInt64(1e300) == .max)
        #expect(ProgressBar.clampedInt64(-5) == 0)
        let backwards = TaskProgress(completed: -5, total: 10, throughput: -1, estimatedTimeRemaining: -3)
        #expect(ProgressBar.render(backwards, label: "f", width: 4).contains("[----]"))
        #expect(FileDownload.adding(.max, 1) == .max)
    }

    @Test func aTerminalGetsEscapedTextChunkByChunk() async throws {
        let captured = CLIRunnerTests.Captured()
        let printer = BodyPrinter(console: console(captured, terminal: true), pretty: .auto)
        try await printer.print(
            chunks([Data("one\u{1B}[31m".utf8), Data([0xE2, 0x82]), Data([0xAC, 0x0A])]), contentType: "text/plain")
        #expect(captured.stdout == "one\\x1b[31m€\n")
    }

    @Test func aTerminalGetsANoteForBinaryAndTheRestIsNotRead() async throws {
        let captured = CLIRunnerTests.Captured()
        let printer = BodyPrinter(console: console(captured, terminal: true), pretty: .auto)
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        continuation.yield(Data("text first\n".utf8))
        continuation.yield(Data([0x00, 0x01, 0x02]))
        // Never finished: the printer must stop on its own.
        try await printer.print(stream, contentType: nil)
        #expect(captured.stdout == "text first\n" + String(decoding: MessageFormatter.binaryNote, as: UTF8.self))
        continuation.finish()
    }

    @Test func aPipeGetsTheExactBytes() async throws {
        let captured = CLIRunnerTests.Captured()
        let printer = BodyPrinter(console: console(captured, terminal: false), pretty: .auto)
        let bytes = Data([0x1B, 0x5B, 0x33, 0x31, 0x6D, 0x00, 0xFF, 0x0D, 0x0A])
        try await printer.print(chunks([bytes.prefix(4), bytes.dropFirst(4)]), contentType: "text/plain")
        #expect(captured.stdout == String(decoding: bytes, as: UTF8.self))
    }

    @Test func largeJSONIsPrintedUnformattedWithANote() async throws {
        let captured = CLIRunnerTests.Captured()
        let printer = BodyPrinter(console: console(captured, terminal: false), pretty: .format)
        let piece = Data(("[" + String(repeating: "1,", count: 512 * 1024 - 1) + "1]").utf8)
        let pieces = Array(repeating: piece, count: 12)
        try await printer.print(chunks(pieces), contentType: "application/json")
        #expect(captured.stderr.contains("larger than 10 MiB: printed as it is, not formatted"), "\(captured.stderr)")
        #expect(captured.stdout.utf8.count == piece.count * 12)
    }

    @Test func aFailedWriteEndsThePrinting() async throws {
        let console = Console(
            stdoutIsTerminal: false, stderrIsTerminal: false, colorAllowed: false, forceProgress: false,
            writeOut: { _ in throw WriteError(code: ENOSPC) }, writeErr: { _ in })
        let printer = BodyPrinter(console: console, pretty: .none)
        let error = await #expect(throws: CommandFailure.self) {
            try await printer.print(chunks([Data("a".utf8)]), contentType: nil)
        }
        #expect(error?.message == "cannot write to standard output: No space left on device")
        #expect(Console.failure(WriteError(code: EPIPE)).message.isEmpty)
        #expect(Console.failure(WriteError(code: EPIPE)).status == .failure)
    }
}
