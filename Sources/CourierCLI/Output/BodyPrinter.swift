import Foundation

/// Prints a response body on standard output as it arrives, in bounded memory.
///
/// - Piped or redirected, with nothing to format: the bytes as received, chunk by chunk.
/// - On a terminal: chunk by chunk with control characters escaped (``TerminalEscaper``); a chunk with a NUL byte,
///   or a first chunk that is not UTF-8, stops the output with a note, and the rest is not read.
/// - JSON to format or colour: collected up to ``formattingLimit`` and formatted piece by piece; a larger body is
///   printed as it is (escaped on a terminal) with a one-line note on standard error.
///
/// Every write waits until it is done, so a failed write (a closed pipe, a full disk) ends the transfer.
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
            var collected = Data()
            var complete = false
            // Enough to decide whether it is JSON when there is no Content-Type.
            while collected.isEmpty {
                guard let chunk = try await iterator.next() else {
                    complete = true
                    break
                }
                collected.append(chunk)
            }
            if MessageFormatter.looksJSON(contentType: contentType, start: collected) {
                while !complete, collected.count <= Self.formattingLimit {
                    guard let chunk = try await iterator.next() else {
                        complete = true
                        break
                    }
                    collected.append(chunk)
                }
                if complete,
                    var formatter = JSONFormatter(
                        collected, reformat: reformat, style: Style(enabled: colour), escapingControls: terminal)
                {
                    var last: UInt8?
                    while let piece = formatter.next() {
                        try await console.write(piece)
                        last = piece.last
                    }
                    if last != UInt8(ascii: "\n") { try await console.write(Data("\n".utf8)) }
                    return
                }
                if !complete {
                    console.err(
                        "courier: the body is larger than \(Self.formattingLimit >> 20) MiB: printed as it is, "
                            + "not formatted\n")
                }
            }
            guard try await output.write(collected) else { return }
        }
        while let chunk = try await iterator.next() {
            guard try await output.write(chunk) else { return }
        }
        try await output.finish()
    }
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
