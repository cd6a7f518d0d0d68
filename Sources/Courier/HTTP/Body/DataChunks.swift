import Foundation

/// A body as an async sequence of chunks, pulled one at a time: request bodies going out and response bodies
/// coming in.
///
/// Pulling is the backpressure: a transport reads from a file, or from the socket, only when the next chunk is
/// asked for, so a paused consumer holds at most one chunk and memory stays constant whatever the body's size.
/// Response bodies can be iterated once.
public struct DataChunks: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = Data

    private let makeIterator: @Sendable () -> AsyncIterator
    /// The whole body, when it is one chunk already in memory: readers may take it without iterating.
    let whole: Data?

    /// Chunks from any async sequence, converted with `transform`.
    public init<Base: AsyncSequence & Sendable>(
        _ base: Base, transform: @escaping @Sendable (Base.Element) -> Data
    ) {
        whole = nil
        makeIterator = {
            var iterator = base.makeAsyncIterator()
            return AsyncIterator {
                guard let element = try await iterator.next() else { return nil }
                return transform(element)
            }
        }
    }

    /// Chunks produced by a closure that `makeNext` makes afresh for each iteration; `nil` ends the body.
    public init(makeNext: @escaping @Sendable () -> (() async throws -> Data?)) {
        whole = nil
        makeIterator = { AsyncIterator(nextChunk: makeNext()) }
    }

    /// The bytes of `data`, as one chunk.
    public init(_ data: Data) {
        whole = data
        makeIterator = {
            var pending: Data? = data
            return AsyncIterator {
                defer { pending = nil }
                return pending
            }
        }
    }

    /// No bytes.
    public static let empty = DataChunks(makeNext: { { nil } })

    /// Starts an iteration.
    public func makeAsyncIterator() -> AsyncIterator {
        makeIterator()
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: () async throws -> Data?

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            try await nextChunk()
        }
    }
}
