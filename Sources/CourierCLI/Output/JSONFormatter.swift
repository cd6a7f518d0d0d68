import Foundation

/// Checks, re-indents and colours JSON text token by token as it is fed, so key order and number spelling stay
/// exactly as the server sent them (a parse and re-encode would sort keys and rewrite `1.0` as `1`), and no object
/// graph is ever built: memory is the nesting stack (a byte a level), the token being escaped for a terminal (at
/// most a piece) and the output not yet taken.
///
/// Feed the text in chunks of any size with ``feed(_:)``, take what is formatted with ``takeOutput()`` as it
/// grows, and end with ``finish()``; any of them throws ``Invalid`` at the first byte that is not JSON (RFC 8259,
/// with a scalar allowed at the top). To print only valid JSON formatted, check it first with ``isValid(_:)``.
///
/// The output stays within a small multiple of the input whatever the shape: what formatting adds (line breaks,
/// indentation, the space after `:`, colour codes) is limited to ``addedBytesPerInputByte`` bytes per byte read
/// plus ``addedBytesAllowance``. Values nested deeper than ``deepestIndentedLevel`` are written on their parent's
/// line; when the limit is reached, lines lose their indentation, then their breaks, and tokens their colour.
/// Ordinary documents never come near it; 10 MB of `[[[…[1,1,1,…]…]]]` would otherwise become gigabytes of spaces.
struct JSONFormatter {
    /// Text that is not JSON, at byte `offset` of the input.
    struct Invalid: Error, Sendable {
        var offset: Int
    }

    /// The deepest level that gets its own lines; deeper values are written without line breaks.
    static let deepestIndentedLevel = 32
    /// About how many bytes of output callers take at a time.
    static let pieceSize = 64 * 1024
    /// What formatting may add for each byte of input.
    static let addedBytesPerInputByte = 3
    /// What formatting may add to any document, so small ones are always formatted in full.
    static let addedBytesAllowance = 64 * 1024

    /// What the next significant byte may be.
    private enum Expect {
        case value, key, colon, commaOrClose, end
    }

    /// The token being read.
    private enum Lexeme {
        case none
        case string
        case stringEscape
        case stringUnicode(remaining: Int)
        case number(NumberPart)
        case literal(text: StaticString, index: Int)
    }

    /// Where in `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` a number is.
    private enum NumberPart {
        case minus, zero, integer, dot, fraction, exponentMark, exponentSign, exponent

        var canEnd: Bool {
            switch self {
            case .zero, .integer, .fraction, .exponent: return true
            case .minus, .dot, .exponentMark, .exponentSign: return false
            }
        }
    }

    private let reformat: Bool
    private let style: Style
    private let indent: Int
    private let escapesControls: Bool
    private let emits: Bool

    private var expect = Expect.value
    private var lexeme = Lexeme.none
    /// `{` or `[` for each open container.
    private var stack: [UInt8] = []
    /// A container just opened: whether it is empty is known at the next significant byte.
    private var pendingOpen = false
    /// Open non-empty containers, for indentation.
    private var depth = 0
    private var consumed = 0
    private var added = 0
    /// The colour reset owed at the end of the current token.
    private var owesReset = false
    /// A string's bytes held to be escaped whole characters at a time (only when escaping).
    private var held: [UInt8] = []
    private var output: [UInt8] = []

    /// A formatter for text to come.
    ///
    /// - Parameters:
    ///   - reformat: indent by `indent` spaces, one value per line; otherwise keep the original spacing.
    ///   - style: colours keys, strings, numbers and literals when enabled.
    ///   - escapingControls: escape control and bidi characters inside strings (for a terminal).
    ///   - emitting: `false` to check the text only, writing nothing.
    init(reformat: Bool, style: Style, indent: Int = 4, escapingControls: Bool = false, emitting: Bool = true) {
        self.reformat = reformat
        self.style = style
        self.indent = indent
        self.escapesControls = escapingControls
        self.emits = emitting
    }

    /// Whether the concatenation of `chunks` is JSON, read chunk by chunk.
    static func isValid(_ chunks: some Sequence<Data>) -> Bool {
        var checker = JSONFormatter(reformat: false, style: Style(enabled: false), emitting: false)
        do {
            for chunk in chunks { try checker.feed(chunk) }
            try checker.finish()
            return true
        } catch {
            return false
        }
    }

    /// The formatted text of `data` at once, or `nil` when it is not JSON: for small documents and tests.
    static func format(
        _ data: Data, reformat: Bool, style: Style, indent: Int = 4, escapingControls: Bool = false
    ) -> String? {
        var formatter = JSONFormatter(
            reformat: reformat, style: style, indent: indent, escapingControls: escapingControls)
        do {
            try formatter.feed(data)
            try formatter.finish()
        } catch {
            return nil
        }
        return String(decoding: formatter.takeOutput(), as: UTF8.self)
    }

    /// Reads `bytes`, appending their formatting to the output.
    ///
    /// - Throws: ``Invalid`` at the first byte that cannot continue JSON text.
    mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) throws {
        for byte in bytes { try consume(byte) }
    }

    /// Ends the text: a number at the very end is complete, anything else unfinished is not JSON.
    ///
    /// - Throws: ``Invalid`` when the text stops inside a value or holds none.
    mutating func finish() throws {
        if case .number(let part) = lexeme {
            guard part.canEnd else { throw Invalid(offset: consumed) }
            endToken()
            lexeme = .none
            afterValue()
        }
        guard case .none = lexeme, !pendingOpen, expect == .end else { throw Invalid(offset: consumed) }
    }

    /// The output formatted so far, handed over and forgotten.
    mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }

    /// How many output bytes wait to be taken.
    var outputCount: Int { output.count }

    // MARK: Reading

    private mutating func consume(_ byte: UInt8) throws {
        consumed += 1
        switch lexeme {
        case .none:
            break
        case .string:
            if byte == UInt8(ascii: "\"") {
                text(byte)
                endToken()
                lexeme = .none
                if expect == .colon { return }
                afterValue()
            } else {
                if byte < 0x20 { throw Invalid(offset: consumed - 1) }
                if byte == UInt8(ascii: "\\") { lexeme = .stringEscape }
                text(byte)
            }
            return
        case .stringEscape:
            switch byte {
            case UInt8(ascii: "u"): lexeme = .stringUnicode(remaining: 4)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                lexeme = .string
            default: throw Invalid(offset: consumed - 1)
            }
            text(byte)
            return
        case .stringUnicode(let remaining):
            guard Self.isHexDigit(byte) else { throw Invalid(offset: consumed - 1) }
            lexeme = remaining > 1 ? .stringUnicode(remaining: remaining - 1) : .string
            text(byte)
            return
        case .number(let part):
            if let next = Self.continueNumber(part, with: byte) {
                lexeme = .number(next)
                emit(byte)
                return
            }
            guard part.canEnd else { throw Invalid(offset: consumed - 1) }
            // The byte after the number is read below, as the start of what follows it.
            endToken()
            lexeme = .none
            afterValue()
        case .literal(let literal, let index):
            let expected = literal.withUTF8Buffer { $0[index] }
            guard byte == expected else { throw Invalid(offset: consumed - 1) }
            emit(byte)
            if index + 1 == literal.utf8CodeUnitCount {
                endToken()
                lexeme = .none
                afterValue()
            } else {
                lexeme = .literal(text: literal, index: index + 1)
            }
            return
        }
        if Self.isWhitespace(byte) {
            if !reformat { emit(byte) }
            return
        }
        if pendingOpen {
            pendingOpen = false
            let open = stack[stack.count - 1]
            if byte == Self.closing(open) {
                emit(byte)
                stack.removeLast()
                afterValue()
                return
            }
            if reformat {
                depth += 1
                if depth <= Self.deepestIndentedLevel { newline() }
            }
        }
        switch expect {
        case .value:
            try startValue(byte)
        case .key:
            guard byte == UInt8(ascii: "\"") else { throw Invalid(offset: consumed - 1) }
            startToken(colour: "34")
            lexeme = .string
            text(byte)
            expect = .colon
        case .colon:
            guard byte == UInt8(ascii: ":") else { throw Invalid(offset: consumed - 1) }
            emit(byte)
            if reformat, allow(1) { output.append(UInt8(ascii: " ")) }
            expect = .value
        case .commaOrClose:
            let open = stack[stack.count - 1]
            if byte == UInt8(ascii: ",") {
                emit(byte)
                if reformat, depth <= Self.deepestIndentedLevel { newline() }
                expect = open == UInt8(ascii: "{") ? .key : .value
            } else if byte == Self.closing(open) {
                if reformat {
                    let wasIndented = depth <= Self.deepestIndentedLevel
                    depth -= 1
                    if wasIndented { newline() }
                }
                emit(byte)
                stack.removeLast()
                afterValue()
            } else {
                throw Invalid(offset: consumed - 1)
            }
        case .end:
            throw Invalid(offset: consumed - 1)
        }
    }

    private mutating func startValue(_ byte: UInt8) throws {
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            emit(byte)
            stack.append(byte)
            pendingOpen = true
            expect = byte == UInt8(ascii: "{") ? .key : .value
        case UInt8(ascii: "\""):
            startToken(colour: "32")
            lexeme = .string
            text(byte)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            startToken(colour: "36")
            lexeme = .number(byte == UInt8(ascii: "-") ? .minus : byte == UInt8(ascii: "0") ? .zero : .integer)
            emit(byte)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            startToken(colour: "35")
            let literal: StaticString =
                byte == UInt8(ascii: "t") ? "true" : byte == UInt8(ascii: "f") ? "false" : "null"
            lexeme = .literal(text: literal, index: 1)
            emit(byte)
        default:
            throw Invalid(offset: consumed - 1)
        }
    }

    private mutating func afterValue() {
        expect = stack.isEmpty ? .end : .commaOrClose
    }

    private static func continueNumber(_ part: NumberPart, with byte: UInt8) -> NumberPart? {
        let digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        let exponent = byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        switch part {
        case .minus: return byte == UInt8(ascii: "0") ? .zero : digit ? .integer : nil
        case .zero: return byte == UInt8(ascii: ".") ? .dot : exponent ? .exponentMark : nil
        case .integer: return digit ? .integer : byte == UInt8(ascii: ".") ? .dot : exponent ? .exponentMark : nil
        case .dot: return digit ? .fraction : nil
        case .fraction: return digit ? .fraction : exponent ? .exponentMark : nil
        case .exponentMark:
            return byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") ? .exponentSign : digit ? .exponent : nil
        case .exponentSign, .exponent: return digit ? .exponent : nil
        }
    }

    // MARK: Writing

    /// Whether formatting may add `count` more bytes; counts them when it may.
    private mutating func allow(_ count: Int) -> Bool {
        guard emits else { return false }
        let limit = Self.addedBytesAllowance + Self.addedBytesPerInputByte * consumed
        guard added + count <= limit else { return false }
        added += count
        return true
    }

    /// A byte of the input, as it is.
    private mutating func emit(_ byte: UInt8) {
        if emits { output.append(byte) }
    }

    /// A byte of a string: held to be escaped on a terminal, else written as it is.
    private mutating func text(_ byte: UInt8) {
        guard emits else { return }
        guard escapesControls else { return output.append(byte) }
        held.append(byte)
        // A long string is escaped a piece at a time, cut before a character's first byte.
        if held.count >= Self.pieceSize, let cut = held.lastIndex(where: { $0 & 0xC0 != 0x80 }), cut > 0 {
            writeHeld(upTo: cut)
        }
    }

    private mutating func writeHeld(upTo end: Int) {
        let escaped = TerminalText.escape(String(decoding: held[..<end], as: UTF8.self), keepingLineBreaks: false)
        output.append(contentsOf: escaped.utf8)
        held.removeFirst(end)
    }

    private static let reset = Array("\u{1B}[0m".utf8)

    /// Starts a token's colour, when colour is on and the limit has room for it and its reset.
    private mutating func startToken(colour code: String) {
        guard style.enabled else { return }
        let start = Array("\u{1B}[\(code)m".utf8)
        guard allow(start.count + Self.reset.count) else { return }
        output.append(contentsOf: start)
        owesReset = true
    }

    /// Writes what a string held back and the colour reset.
    private mutating func endToken() {
        if !held.isEmpty { writeHeld(upTo: held.count) }
        if owesReset {
            output.append(contentsOf: Self.reset)
            owesReset = false
        }
    }

    /// A line break and the indentation of `depth`; only the break, or nothing, as the limit allows.
    private mutating func newline() {
        let spaces = max(0, depth) * indent
        if allow(1 + spaces) {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces))
        } else if allow(1) {
            output.append(UInt8(ascii: "\n"))
        }
    }

    private static func closing(_ open: UInt8) -> UInt8 {
        open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
