import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

/// Request-body chunks as `ByteBuffer`s, reporting how many bytes AsyncHTTPClient has pulled so far.
struct ProgressCountingChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunks: DataChunks
    let progress: (@Sendable (Int64) -> Void)?
    let group: any EventLoopGroup

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: chunks.makeAsyncIterator(), progress: progress, brake: WriteQueueBrake(group: group))
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: DataChunks.AsyncIterator
        let progress: (@Sendable (Int64) -> Void)?
        var sent: Int64 = 0
        var brake: WriteQueueBrake

        mutating func next() async throws -> ByteBuffer? {
            try await brake.waitForEarlierWrites()
            guard let chunk = try await base.next() else { return nil }
            sent += Int64(chunk.count)
            progress?(sent)
            return ByteBuffer(data: chunk)
        }
    }
}

/// A file body read straight into `ByteBuffer`s (no `Data` in between), checking that the file keeps the length
/// that was announced in `Content-Length`, as ``HTTPRequestBody/makeChunks()`` does.
struct FileBuffers: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let url: URL
    let chunkSize: Int
    let length: Int64
    let progress: (@Sendable (Int64) -> Void)?
    let group: any EventLoopGroup

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: FileBuffers
        var reader: FileChunkReader?
        var sent: Int64 = 0
        var brake: WriteQueueBrake
        let allocator = ByteBufferAllocator()

        init(source: FileBuffers) {
            self.source = source
            brake = WriteQueueBrake(group: source.group)
        }

        mutating func next() async throws -> ByteBuffer? {
            try await brake.waitForEarlierWrites()
            if reader == nil {
                reader = try FileChunkReader(
                    url: source.url, chunkSize: source.chunkSize, expectedLength: source.length)
            }
            let allocator = allocator
            guard let reader else { return nil }
            let read = try await BlockingIO.run {
                try reader.next { count, descriptor in
                    var buffer = allocator.buffer(capacity: count)
                    let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) {
                        try FileChunkReader.read(descriptor, into: $0, count: count)
                    }
                    return (buffer, read)
                }
            }
            guard let buffer = read else { return nil }
            sent += Int64(buffer.readableBytes)
            source.progress?(sent)
            return buffer
        }
    }
}

/// Keeps a streamed request body at most two buffers ahead of the socket.
///
/// AsyncHTTPClient hands each request-body buffer to the connection's event loop and asks for the next one at once;
/// it pauses the body only after that loop has seen the socket fill up. A file (or any fast source) produces far
/// faster than a socket drains, so without a brake megabytes pile up in the loop's queue. Before each buffer, this
/// waits for a marker that was queued on every event loop just before the previous buffer was handed over: once it
/// has run, the buffer before the previous one has been written or has paused the body. Reading the next buffer
/// still overlaps with writing the previous one.
struct WriteQueueBrake {
    /// The transport's event loops, one of which holds the connection.
    let group: any EventLoopGroup
    private var markers: [EventLoopFuture<Void>] = []

    init(group: any EventLoopGroup) {
        self.group = group
    }

    mutating func waitForEarlierWrites() async throws {
        for marker in markers { try await marker.get() }
        markers = group.makeIterator().map { $0.submit {} }
    }
}
