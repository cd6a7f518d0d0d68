import Foundation

/// A request body that is streamed to the network in chunks, never loaded whole (except ``data(_:)``).
///
/// A body is *replayable* when it can be produced again from the start: a redirect that keeps the body (307/308) or
/// an authentication retry needs that. Data and file bodies are replayable; a body from an arbitrary async sequence
/// is not, unless it is made with a factory.
public struct HTTPRequestBody: Sendable {
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
    public static func data(_ data: Data) -> HTTPRequestBody {
        HTTPRequestBody(data: data)
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
    public static func file(_ url: URL, chunkSize: Int = 256 * 1024) throws -> HTTPRequestBody {
        guard url.isFileURL else { throw CourierError.invalidURL(url.absoluteString) }
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
        return HTTPRequestBody(file: url, chunkSize: max(1, chunkSize), length: size?.int64Value ?? 0)
    }

    /// A body from an async sequence of chunks, which can be sent once.
    public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64?) -> HTTPRequestBody
    where Chunks.Element == Data {
        HTTPRequestBody(length: length, isReplayable: false) { DataChunks(chunks, transform: { $0 }) }
    }

    /// A new stream of the body's chunks, pulled one at a time.
    public func makeChunks() throws -> DataChunks {
        try makeStream()
    }
}
