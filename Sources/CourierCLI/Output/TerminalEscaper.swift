import Foundation

/// Escapes a body for a terminal chunk by chunk, as it arrives, with the rules of ``TerminalText``.
///
/// Works on bytes so a body of any size is escaped in bounded memory: a UTF-8 sequence cut by a chunk boundary is
/// held until the next chunk, as is a CR (kept only as part of CRLF, since a lone CR overwrites the line). Line feeds
/// and tabs are kept; bytes that are not UTF-8 are shown as `\xff`.
struct TerminalEscaper {
    /// An incomplete UTF-8 sequence, or a CR, left over from the last chunk.
    private var pending: [UInt8] = []

    /// Creates an escaper.
    init() {}

    /// The escaped text of `chunk`, except what needs the next chunk to be decided.
    mutating func escape(_ chunk: Data) -> Data {
        process(pending + [UInt8](chunk), final: false)
    }

    /// What was held over, escaped: call once the body has ended.
    mutating func finish() -> Data {
        process(pending, final: true)
    }

    private mutating func process(_ bytes: [UInt8], final: Bool) -> Data {
        pending = []
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        func escapeValue(_ value: UInt32) { output.append(contentsOf: TerminalText.escaped(value).utf8) }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == 0x0A || byte == 0x09 || (byte >= 0x20 && byte != 0x7F) {
                    output.append(byte)
                } else if byte == 0x0D, index + 1 == bytes.count, !final {
                    pending = [byte]
                    break
                } else if byte == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                    output.append(byte)
                } else {
                    escapeValue(UInt32(byte))
                }
                index += 1
                continue
            }
            let length: Int
            switch byte {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: length = 0
            }
            guard length > 0 else {
                escapeValue(UInt32(byte))
                index += 1
                continue
            }
            let available = bytes.count - index
            if available < length, !final, Self.continuationsValid(bytes[index...]) {
                pending = Array(bytes[index...])
                break
            }
            guard available >= length, Self.continuationsValid(bytes[index..<(index + length)]) else {
                escapeValue(UInt32(byte))
                index += 1
                continue
            }
            let sequence = bytes[index..<(index + length)]
            var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for continuation in sequence.dropFirst() { value = value << 6 | UInt32(continuation & 0x3F) }
            if let scalar = Unicode.Scalar(value), TerminalText.isControl(scalar) {
                escapeValue(value)
            } else {
                output.append(contentsOf: sequence)
            }
            index += length
        }
        return Data(output)
    }

    /// Whether the bytes after a lead byte are continuation bytes the lead allows (no overlong forms, surrogates or
    /// values past U+10FFFF); `bytes` may be a prefix of the sequence.
    private static func continuationsValid(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let lead = bytes.first else { return false }
        for (offset, byte) in bytes.dropFirst().enumerated() {
            var range: ClosedRange<UInt8> = 0x80...0xBF
            if offset == 0 {
                switch lead {
                case 0xE0: range = 0xA0...0xBF
                case 0xED: range = 0x80...0x9F
                case 0xF0: range = 0x90...0xBF
                case 0xF4: range = 0x80...0x8F
                default: break
                }
            }
            if !range.contains(byte) { return false }
        }
        return true
    }
}
