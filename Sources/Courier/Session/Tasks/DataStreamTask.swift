import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A data task that hands its body out as it arrives instead of collecting it (Alamofire's `DataStreamRequest`):
/// for line-delimited JSON, server-sent events, or bodies too large to hold.
///
/// Iterate ``chunks`` (or ``lines``) once. The task reads at most one chunk ahead of the iteration, so a slow
/// consumer slows the download instead of filling memory; waiting for the consumer does not count towards the
/// request timeout. When the last iterator of the body is released before the end, or the iterating Swift task
/// is cancelled, the task is cancelled. A task whose body nobody iterates waits after its first chunk.
public final class DataStreamTask: DataTask, @unchecked Sendable {
    let handoff: ChunkHandoff
    /// Cancels the task when the last consumer of the body goes away early. Weak: the consumers own it.
    private weak var consumer: ConsumerLifetime?
    private let consumerLock = NSLock()

    init(request: URLRequest, controller: any TaskController, handoff: ChunkHandoff) {
        self.handoff = handoff
        super.init(source: .made(request), controller: controller)
    }

    /// The final response head (after redirects), once it has arrived.
    ///
    /// - Throws: the task's error when it fails before then.
    public func response() async throws -> HTTPURLResponse {
        try await handoff.head()
    }

    /// The body's chunks, in order, as they arrive; the sequence throws the task's error if it fails midway.
    public var chunks: ResponseChunks {
        consumerLock.lock()
        defer { consumerLock.unlock() }
        if let consumer { return ResponseChunks(handoff: handoff, lifetime: consumer) }
        let lifetime = ConsumerLifetime(task: self)
        consumer = lifetime
        return ResponseChunks(handoff: handoff, lifetime: lifetime)
    }

    /// The body as UTF-8 lines (without their CRLF, LF or CR; see ``ResponseLines``), for line-delimited JSON. For
    /// server-sent events, use ``SessionManager/eventStream(_:configuration:)``.
    public var lines: ResponseLines { ResponseLines(chunks: chunks) }
}

/// Cancels a streamed task that is still running when the last sequence or iterator of its body is released.
final class ConsumerLifetime: Sendable {
    private weak let task: DataStreamTask?

    init(task: DataStreamTask) {
        self.task = task
    }

    deinit {
        if let task, task.state != .completed { task.cancel() }
    }

    func cancelTask() {
        task?.cancel()
    }
}

/// A streamed body's chunks: see ``DataStreamTask``.
public struct ResponseChunks: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = Data

    let handoff: ChunkHandoff
    let lifetime: ConsumerLifetime

    /// Starts the (single) iteration.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handoff: handoff, lifetime: lifetime)
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let handoff: ChunkHandoff
        let lifetime: ConsumerLifetime

        /// The next chunk, or `nil` at the end of the body.
        ///
        /// - Throws: the task's ``CourierError`` when it fails or is cancelled midway.
        public mutating func next() async throws -> Data? {
            let lifetime = lifetime
            return try await handoff.next(onCancel: { lifetime.cancelTask() })
        }
    }
}

/// A streamed body split into lines at CRLF, LF or CR (also when a CR and its LF arrive in different chunks); the
/// last line is delivered even without a terminator, once the body has ended. Invalid UTF-8 is replaced with U+FFFD.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line, without its terminator.
    public typealias Element = String

    let chunks: ResponseChunks

    /// Starts the (single) iteration.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator())
    }

    /// Iterates the lines.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: ResponseChunks.AsyncIterator
        var splitter = LineSplitter()
        var ended = false

        init(chunks: ResponseChunks.AsyncIterator) {
            self.chunks = chunks
        }

        /// The next line, or `nil` after the last one.
        public mutating func next() async throws -> String? {
            while true {
                if let line = splitter.nextLine() { return String(decoding: line, as: UTF8.self) }
                if ended { return splitter.remainder().map { String(decoding: $0, as: UTF8.self) } }
                if let chunk = try await chunks.next() {
                    splitter.append(chunk)
                } else {
                    ended = true
                }
            }
        }
    }
}

/// A response whose head has arrived and whose body is read as it arrives: see ``SessionManager/stream(_:acceptableStatusCodes:)``.
public struct StreamedResponse: Sendable {
    /// The task, e.g. to cancel it or read its progress.
    public let task: DataStreamTask
    /// The final response head.
    public let response: HTTPURLResponse

    /// The body's chunks as they arrive.
    public var chunks: ResponseChunks { task.chunks }
    /// The body as UTF-8 lines as they arrive.
    public var lines: ResponseLines { task.lines }
}
