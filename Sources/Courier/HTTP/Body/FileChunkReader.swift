import Foundation

/// Reads a file in chunks and checks that it is exactly as long as it was announced, so a file that changes size
/// during an upload fails it instead of being truncated or padded. At the announced end one more byte is asked for:
/// getting it means the file grew.
///
/// The one file reader of uploads: ``HTTPRequestBody/file(_:chunkSize:)`` reads `Data` with it, a transport may read
/// into its own buffers with ``next(reading:)``, and multipart forms read their file parts with it.
///
/// Reads happen outside the lock: a reader is used by one body iteration at a time, and a second concurrent read
/// fails with ``ConcurrentBodyReadError`` instead of waiting behind the first one's I/O. Callers in async code run
/// ``next()`` through ``BlockingIO``.
///
/// `@unchecked Sendable`: the handle and offset are only touched under `state`'s lock, or by the one read that
/// marked the reader busy under it.
final class FileChunkReader: @unchecked Sendable {
    private struct State {
        var handle: FileHandle
        var sent: Int64 = 0
        var busy = false
    }

    private let state: Locked<State>
    private let chunkSize: Int
    private let expectedLength: Int64
    private let url: URL

    /// Opens the file.
    ///
    /// - Throws: the file system's error when the file cannot be opened.
    init(url: URL, chunkSize: Int, expectedLength: Int64) throws {
        self.state = Locked(State(handle: try FileHandle(forReadingFrom: url)))
        self.chunkSize = max(1, chunkSize)
        self.expectedLength = expectedLength
        self.url = url
    }

    /// The next chunk as `Data`, or `nil` at the end.
    ///
    /// - Throws: ``FileChangedError`` when the file turns out longer or shorter than announced.
    func next() throws -> Data? {
        try next { count, descriptor in
            var data = Data(count: count)
            let read = try data.withUnsafeMutableBytes { try Self.read(descriptor, into: $0, count: count) }
            data.count = read
            return (data, read)
        }
    }

    /// The next chunk, read by `read` into storage of its own, or `nil` at the end.
    ///
    /// - Parameter read: given how many bytes to ask for and the file's descriptor, makes a chunk, fills it (with
    ///   ``read(_:into:count:)``) and returns it with the number of bytes read; `0` means the end of the file.
    /// - Throws: ``FileChangedError`` when the file turns out longer or shorter than announced.
    func next<Chunk>(reading read: (_ count: Int, _ descriptor: Int32) throws -> (Chunk, Int)) throws -> Chunk? {
        let (handle, sent) = try state.withLock { state in
            guard !state.busy else { throw ConcurrentBodyReadError() }
            state.busy = true
            return (state.handle, state.sent)
        }
        defer { state.withLock { $0.busy = false } }
        let remaining = expectedLength - sent
        let (chunk, count) = try read(Int(min(Int64(chunkSize), max(remaining, 1))), handle.fileDescriptor)
        if count == 0 {
            try? handle.close()
            guard remaining == 0 else { throw FileChangedError(url: url, expected: expectedLength, read: sent) }
            return nil
        }
        let total = sent + Int64(count)
        state.withLock { $0.sent = total }
        guard total <= expectedLength else {
            throw FileChangedError(url: url, expected: expectedLength, read: total)
        }
        return chunk
    }

    /// `read(2)` of up to `count` bytes into `buffer`, retried when interrupted; `0` at the end of the file.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, count: Int) throws -> Int {
        while true {
            let result = Foundation.read(descriptor, buffer.baseAddress, min(count, buffer.count))
            if result >= 0 { return result }
            if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    deinit {
        state.withLock { try? $0.handle.close() }
    }
}

/// A file being uploaded changed size after its length was announced.
public struct FileChangedError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var url: URL
    /// The length announced in `Content-Length`.
    public var expected: Int64
    /// How many bytes had been read when the change was seen.
    public var read: Int64

    /// E.g. `The file /tmp/x changed size during the upload: expected 100 bytes, read 120.`
    public var description: String {
        "The file \(url.path) changed size during the upload: expected \(expected) bytes, read \(read)."
    }
}
