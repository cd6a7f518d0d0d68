import Foundation

/// Splits bytes into lines at CRLF, LF or CR, however they arrive in chunks: a CR that ends one chunk and an LF
/// that starts the next are one line break, not two.
///
/// Lines come out without their terminator. The bytes after the last terminator wait for more (``remainder()``
/// hands them out at the end). Memory: the pending bytes of the current line, and the lines of the last chunk not
/// taken yet.
struct LineSplitter: Sendable {
    private var bytes: [UInt8] = []
    /// Where the current line starts in `bytes`.
    private var start = 0
    /// Bytes from `start` up to here hold no terminator.
    private var scanned = 0
    /// The last terminator was a CR at the very end of the bytes: an LF that comes next belongs to it.
    private var skipsLineFeed = false

    /// Bytes of the current, unterminated line.
    var pendingCount: Int { bytes.count - start }

    /// Adds the next chunk of the stream.
    mutating func append(_ chunk: Data) {
        if start > 0, start >= bytes.count / 2 {
            bytes.removeFirst(start)
            scanned -= start
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// The next complete line, or `nil` when the bytes so far end inside a line.
    mutating func nextLine() -> ArraySlice<UInt8>? {
        if skipsLineFeed, start < bytes.count {
            skipsLineFeed = false
            if bytes[start] == 0x0A { start += 1 }
        }
        var index = max(scanned, start)
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A || byte == 0x0D {
                let line = bytes[start..<index]
                if byte == 0x0D, index + 1 == bytes.count {
                    skipsLineFeed = true
                    start = index + 1
                } else {
                    start = byte == 0x0D && bytes[index + 1] == 0x0A ? index + 2 : index + 1
                }
                scanned = start
                return line
            }
            index += 1
        }
        scanned = index
        return nil
    }

    /// The bytes after the last line break (an unterminated last line), or `nil` when there are none; the
    /// splitter is empty afterwards.
    mutating func remainder() -> ArraySlice<UInt8>? {
        defer { self = LineSplitter() }
        return start < bytes.count ? bytes[start...] : nil
    }
}
