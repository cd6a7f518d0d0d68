import Foundation

/// Prints a response body on standard output as it arrives, in bounded memory.
///
/// - Piped or redirected, with nothing to format: the bytes as received, chunk by chunk.
/// - On a terminal: chunk by chunk with control characters escaped (``TerminalEscaper``); a chunk with a NUL byte,
///   or a first chunk that is not UTF-8, stops the output with a note, and the rest is not read.
/// - JSON to format or colour: collected up to ``formattingLimit``, checked by ``JSONFormatter`` without building
///   any object, then formatted piece by piece; text that is not JSON is printed as it is, and so is a larger body
///   (escaped on a terminal), with a one-line note on standard error.
///
/// Writes go through ``Console/write(_:)``, which waits whenever the output's buffer is full, and a failed write (a
/// closed pipe, a full disk) is thrown by the next one or by the final flush: either ends the transfer.
struct BodyPrinter {
    /// The largest body collected to be formatted: 10 MiB.
    static let formattingLimit = 10 * 1024 * 1024

    let console: Console
    let pretty: PrettyMode

    /// Prints `chunks`; `contentType` is the response's `Content-Type`.
    ///
    /// - Throws: the body's errors, and ``CommandFailure`` for a failed write.
    func print<Chunks: AsyncSequence>(_ chunks: Chunks, contentType: String?) async throws
    where Chunks.Element == Data {
        let terminal = console.stdoutIsTerminal
        let reformat = pretty.formats(terminal: terminal)
        let colour = pretty.colors(terminal: terminal, allowed: console.colorAllowed)
        var iterator = chunks.makeAsyncIterator()
        var output = StreamOutput(console: console, terminal: terminal)

        if reformat || colour {
            var collected: [Data] = []
            var size = 0
            var complete = false
            // Enough to decide whether it is JSON when there is no Content-Type.
            while size == 0 {
                guard let chunk = try await iterator.next() else {
                    complete = true
                    break
                }
                collected.append(chunk)
                size += chunk.count
            }
            if MessageFormatter.looksJSON(contentType: contentType, start: collected.first ?? Data()) {
                while !complete, size <= Self.formattingLimit {
                    guard let chunk = try await iterator.next() else {
                        complete = true
                        break
                    }
                    collected.append(chunk)
                    size += chunk.count
                }
                // Checked whole before a byte is printed, so text that is not JSON is printed as it came.
                let body = collected
                // A check of up to 10 MiB is long work: off the cooperative pool, as blocking calls are.
                if complete, try await BlockingIO.run({ JSONFormatter.isValid(body) }) {
                    try await printFormatted(collected, reformat: reformat, colour: colour, terminal: terminal)
                    return
                }
                if !complete {
                    console.err(
                        "courier: the body is larger than \(Self.formattingLimit >> 20) MiB: printed as it is, "
                            + "not formatted\n")
                }
            }
            for chunk in collected {
                guard try await output.write(chunk) else { return }
            }
        }
        while let chunk = try await iterator.next() {
            guard try await output.write(chunk) else { return }
        }
        try await output.finish()
    }

    /// Writes valid JSON formatted, a piece at a time: the formatter reads a slice, and what it made is written
    /// once it passes ``JSONFormatter/pieceSize``.
    private func printFormatted(_ chunks: [Data], reformat: Bool, colour: Bool, terminal: Bool) async throws {
        var formatter = JSONFormatter(reformat: reformat, style: Style(enabled: colour), escapingControls: terminal)
        var last: UInt8?
        for chunk in chunks {
            var start = chunk.startIndex
            while start < chunk.endIndex {
                let end =
                    chunk.index(start, offsetBy: Self.formattingSlice, limitedBy: chunk.endIndex) ?? chunk.endIndex
                try formatter.feed(chunk[start..<end])
                start = end
                await Task.yield()
                if formatter.outputCount >= JSONFormatter.pieceSize {
                    let piece = formatter.takeOutput()
                    last = piece.last
                    try await console.write(Data(piece))
                }
            }
        }
        try formatter.finish()
        let piece = formatter.takeOutput()
        if !piece.isEmpty {
            last = piece.last
            try await console.write(Data(piece))
        }
        if last != UInt8(ascii: "\n") { try await console.write(Data("\n".utf8)) }
    }

    /// How much input the formatter reads between checks of its output.
    private static let formattingSlice = 16 * 1024
}

/// The unformatted path of ``BodyPrinter``: raw bytes to a pipe or a file, escaped text to a terminal.
private struct StreamOutput {
    let console: Console
    let terminal: Bool
    var escaper = TerminalEscaper()
    var isFirst = true

    init(console: Console, terminal: Bool) {
        self.console = console
        self.terminal = terminal
    }

    /// Writes a chunk; `false` when the body turned out to be binary on a terminal and printing stops.
    mutating func write(_ chunk: Data) async throws -> Bool {
        guard terminal else {
            if !chunk.isEmpty { try await console.write(chunk) }
            return true
        }
        defer { isFirst = false }
        if chunk.contains(0) || (isFirst && !Self.startsAsUTF8(chunk)) {
            try await console.write(MessageFormatter.binaryNote)
            return false
        }
        let escaped = escaper.escape(chunk)
        if !escaped.isEmpty { try await console.write(escaped) }
        return true
    }

    /// Writes what the escaper held back.
    mutating func finish() async throws {
        guard terminal else { return }
        let rest = escaper.finish()
        if !rest.isEmpty { try await console.write(rest) }
    }

    /// Whether `chunk` is UTF-8, but for a sequence cut at its end by the chunk boundary.
    private static func startsAsUTF8(_ chunk: Data) -> Bool {
        for cut in 0...min(3, chunk.count) where String(data: chunk.dropLast(cut), encoding: .utf8) != nil {
            return true
        }
        return false
    }
}
