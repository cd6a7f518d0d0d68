import Foundation

/// A request body that is streamed to the network in chunks, never loaded whole (except ``data(_:)``).
///
/// A body is *replayable* when it can be produced again from the start: a redirect that keeps the body (307/308) or
/// an authentication retry needs that. Data and file bodies are replayable; a body from an arbitrary async sequence
/// is not, unless it is made with a factory.
public struct RequestBody: Sendable {
    /// The body's length in bytes; `nil` sends it chunked.
    public let length: Int64?
    /// Whether ``makeChunks()`` can be called more than once.
    public let isReplayable: Bool
    /// The bytes, when the body is in memory: transports send these without streaming.
    public let data: Data?
    /// The file and chunk size, when the body is a whole file: a transport may read it its own way (into its own
    /// buffers), as long as it checks the length as ``makeChunks()`` does.
    public let file: (url: URL, chunkSize: Int)?
    private let makeStream: @Sendable () throws -> DataChunks

    /// Creates a body from a factory that makes the chunks afresh each time it is called.
    public init(length: Int64?, isReplayable: Bool, makeChunks: @escaping @Sendable () throws -> DataChunks) {
        self.length = length
        self.isReplayable = isReplayable
        self.data = nil
        self.file = nil
        self.makeStream = makeChunks
    }

    private init(file: URL, chunkSize: Int, length: Int64) {
        self.length = length
        self.isReplayable = true
        self.data = nil
        self.file = (file, chunkSize)
        self.makeStream = {
            let reader = try FileChunkReader(url: file, chunkSize: chunkSize, expectedLength: length)
            return DataChunks(makeNext: { { try await BlockingIO.run { try reader.next() } } })
        }
    }

    /// A body held in memory.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(data: data)
    }

    private init(data: Data) {
        self.length = Int64(data.count)
        self.isReplayable = true
        self.data = data
        self.file = nil
        self.makeStream = { DataChunks(data) }
    }

    /// A body read from a file in `chunkSize` pieces; its length is the file's size when the body is made.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` for a URL that is not a file URL, or the file system's error when
    ///   the file cannot be read.
    public static func file(_ url: URL, chunkSize: Int = 256 * 1024) throws -> RequestBody {
        guard url.isFileURL else { throw CourierError.invalidURL(url.absoluteString) }
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
        return RequestBody(file: url, chunkSize: max(1, chunkSize), length: size?.int64Value ?? 0)
    }

    /// A body from an async sequence of chunks, which can be sent once.
    public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64?) -> RequestBody
    where Chunks.Element == Data {
        RequestBody(length: length, isReplayable: false) { DataChunks(chunks, transform: { $0 }) }
    }

    /// A new stream of the body's chunks, pulled one at a time.
    public func makeChunks() throws -> DataChunks {
        try makeStream()
    }
}

/// Reads a file in chunks and checks that it is exactly as long as it was announced, so a file that changes size
/// during an upload fails it instead of being truncated or padded. At the announced end one more byte is asked for:
/// getting it means the file grew.
///
/// The one file reader of uploads: ``RequestBody/file(_:chunkSize:)`` reads `Data` with it, a transport may read
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
