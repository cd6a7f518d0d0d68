/// Text a server chose, made safe to print on a terminal.
///
/// A terminal obeys control characters: `ESC [` sequences recolour, move the cursor, rewrite the title or (on some
/// terminals) answer back into the input; BEL rings; CR overwrites the line; C1 characters (U+0080…U+009F) are the
/// same commands in one character; bidi overrides make `evil.exe‮txt.` read as something else. Courier prints them
/// escaped instead, as `\x1b` (C0, DEL, C1) and `\u{202E}` (bidi controls), so what the server sent stays visible
/// and cannot act.
enum TerminalText {
    /// Whether a character is one the terminal would act on rather than show.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F, 0x80...0x9F: return true
        // Bidi embeddings, overrides and isolates, and the Arabic letter mark: they reorder what follows.
        case 0x202A...0x202E, 0x2066...0x2069, 0x061C, 0x200E, 0x200F: return true
        default: return false
        }
    }

    /// `\x1b` for a character below U+0100, `\u{202E}` above.
    static func escaped(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{" + hex + "}"
    }

    /// `text` with control characters escaped; line feeds and tabs are kept when `keepingLineBreaks` (messages and
    /// bodies), escaped otherwise (one header line).
    static func escape(_ text: String, keepingLineBreaks: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if keepingLineBreaks, scalar == "\n" || scalar == "\t" {
                result.unicodeScalars.append(scalar)
            } else if isControl(scalar) {
                result += escaped(scalar.value)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` without control characters at all: for file names, where an escape would end up in the name.
    static func removingControls(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.append(contentsOf: text.unicodeScalars.filter { !isControl($0) })
        return result
    }
}
