import Foundation

/// Re-indents and colours JSON text token by token, so key order and number spelling stay exactly as the server
/// sent them (a parse and re-encode would sort keys and rewrite `1.0` as `1`).
enum JSONFormatter {
    /// The formatted text, or `nil` when `data` is not JSON (it is then printed as it is).
    ///
    /// - Parameters:
    ///   - reformat: indent by `indent` spaces, one value per line; otherwise keep the original spacing.
    ///   - style: colours keys, strings, numbers and literals when enabled.
    static func format(_ data: Data, reformat: Bool, style: Style, indent: Int = 4) -> String? {
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil else { return nil }
        let bytes = [UInt8](data)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var depth = 0
        var index = 0

        func emit(_ text: String) { output.append(contentsOf: Array(text.utf8)) }
        func styled(_ code: String, _ slice: ArraySlice<UInt8>) {
            if style.enabled { emit("\u{1B}[\(code)m") }
            output.append(contentsOf: slice)
            if style.enabled { emit("\u{1B}[0m") }
        }
        func newline() {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * indent))
        }
        func nextSignificant(after position: Int) -> UInt8? {
            var cursor = position
            while cursor < bytes.count, isWhitespace(bytes[cursor]) { cursor += 1 }
            return cursor < bytes.count ? bytes[cursor] : nil
        }

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case _ where isWhitespace(byte):
                if !reformat { output.append(byte) }
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                index += 1
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if reformat {
                    if nextSignificant(after: index) == close { continue }
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if reformat, let last = output.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") {
                    depth -= 1
                    newline()
                }
                output.append(byte)
                index += 1
            case UInt8(ascii: ","):
                output.append(byte)
                index += 1
                if reformat { newline() }
            case UInt8(ascii: ":"):
                output.append(byte)
                index += 1
                if reformat { output.append(UInt8(ascii: " ")) }
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                end = min(end + 1, bytes.count)
                let isKey = nextSignificant(after: end) == UInt8(ascii: ":")
                styled(isKey ? "34" : "32", bytes[index..<end])
                index = end
            default:
                var end = index
                while end < bytes.count, !isWhitespace(bytes[end]), !",:]}".utf8.contains(bytes[end]) { end += 1 }
                let isNumber = byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                styled(isNumber ? "36" : "35", bytes[index..<end])
                index = end
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
