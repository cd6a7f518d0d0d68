import Foundation

/// Re-indents and colours JSON text token by token, so key order and number spelling stay exactly as the server
/// sent them (a parse and re-encode would sort keys and rewrite `1.0` as `1`).
///
/// The output is produced in pieces (``next()``) so it is never held whole, and its size stays linear in the input:
/// values nested deeper than ``deepestIndentedLevel`` are written compactly on their parent's line, as otherwise
/// 200 KB of `[[[[…]]]]` would become hundreds of megabytes of indentation.
struct JSONFormatter {
    /// The deepest level that gets its own lines; deeper values are written without line breaks.
    static let deepestIndentedLevel = 32
    /// About how many bytes each piece ``next()`` returns has.
    static let pieceSize = 64 * 1024

    private let bytes: [UInt8]
    private let reformat: Bool
    private let style: Style
    private let indent: Int
    private let escapesControls: Bool
    private var index = 0
    private var depth = 0
    private var lastWritten: UInt8?
    private var output: [UInt8] = []

    /// A formatter for `data`, or `nil` when it is not JSON (it is then printed as it is).
    ///
    /// - Parameters:
    ///   - reformat: indent by `indent` spaces, one value per line; otherwise keep the original spacing.
    ///   - style: colours keys, strings, numbers and literals when enabled.
    ///   - escapingControls: escape control and bidi characters inside strings (for a terminal).
    init?(_ data: Data, reformat: Bool, style: Style, indent: Int = 4, escapingControls: Bool = false) {
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil else { return nil }
        bytes = [UInt8](data)
        self.reformat = reformat
        self.style = style
        self.indent = indent
        self.escapesControls = escapingControls
    }

    /// The formatted text of `data` at once, or `nil` when it is not JSON: for small documents and tests.
    static func format(
        _ data: Data, reformat: Bool, style: Style, indent: Int = 4, escapingControls: Bool = false
    ) -> String? {
        guard
            var formatter = JSONFormatter(
                data, reformat: reformat, style: style, indent: indent, escapingControls: escapingControls)
        else { return nil }
        var result = Data()
        while let piece = formatter.next() { result.append(piece) }
        return String(decoding: result, as: UTF8.self)
    }

    /// The next piece of the formatted text, or `nil` once it is all written.
    mutating func next() -> Data? {
        output.removeAll(keepingCapacity: true)
        while index < bytes.count, output.count < Self.pieceSize { step() }
        return output.isEmpty ? nil : Data(output)
    }

    /// Formats one token (or one whitespace byte).
    private mutating func step() {
        let byte = bytes[index]
        switch byte {
        case _ where Self.isWhitespace(byte):
            if !reformat { append(byte) }
            index += 1
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            append(byte)
            index += 1
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            if reformat, nextSignificant(after: index) != close {
                depth += 1
                if depth <= Self.deepestIndentedLevel { newline() }
            }
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if reformat, let last = lastWritten, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") {
                let wasIndented = depth <= Self.deepestIndentedLevel
                depth -= 1
                if wasIndented { newline() }
            }
            append(byte)
            index += 1
        case UInt8(ascii: ","):
            append(byte)
            index += 1
            if reformat, depth <= Self.deepestIndentedLevel { newline() }
        case UInt8(ascii: ":"):
            append(byte)
            index += 1
            if reformat { output.append(UInt8(ascii: " ")) }
        case UInt8(ascii: "\""):
            var end = index + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
            }
            end = min(end + 1, bytes.count)
            let isKey = nextSignificant(after: end) == UInt8(ascii: ":")
            styled(isKey ? "34" : "32", bytes[index..<end], isString: true)
            index = end
        default:
            var end = index
            while end < bytes.count, !Self.isWhitespace(bytes[end]), !",:]}".utf8.contains(bytes[end]) { end += 1 }
            let isNumber = byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            styled(isNumber ? "36" : "35", bytes[index..<end], isString: false)
            index = end
        }
    }

    private mutating func append(_ byte: UInt8) {
        output.append(byte)
        lastWritten = byte
    }

    private mutating func emit(_ text: String) { output.append(contentsOf: Array(text.utf8)) }

    private mutating func styled(_ code: String, _ slice: ArraySlice<UInt8>, isString: Bool) {
        if style.enabled { emit("\u{1B}[\(code)m") }
        if escapesControls, isString {
            emit(TerminalText.escape(String(decoding: slice, as: UTF8.self), keepingLineBreaks: false))
        } else {
            output.append(contentsOf: slice)
        }
        lastWritten = slice.last
        if style.enabled { emit("\u{1B}[0m") }
    }

    private mutating func newline() {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: max(0, depth) * indent))
        lastWritten = UInt8(ascii: "\n")
    }

    private func nextSignificant(after position: Int) -> UInt8? {
        var cursor = position
        while cursor < bytes.count, Self.isWhitespace(bytes[cursor]) { cursor += 1 }
        return cursor < bytes.count ? bytes[cursor] : nil
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
