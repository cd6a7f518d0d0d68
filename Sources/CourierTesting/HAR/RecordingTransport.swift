import Courier
import Foundation

/// A ``Transport`` that sends through another and writes every exchange to an HTTP Archive (HAR 1.2), for
/// ``ReplayTransport`` to answer from later, with no server, or for a browser's or a proxy's tools to read.
///
/// ```swift
/// let recorder = RecordingTransport(wrapping: NIOTransport(), file: URL(fileURLWithPath: "session.har"))
/// let manager = HTTPSessionManager(baseURL: api, configuration: .ephemeral, transport: recorder)
/// _ = try await manager.send("GET", "status", serializer: HTTPResponseSerializer())  // in the file once read
/// await recorder.shutdown()
/// ```
///
/// Secrets are redacted by default: the values of `Authorization`, `Proxy-Authorization`, `Cookie` and
/// `Set-Cookie` (and of the cookies listed from them) are written as `REDACTED`, as are the fields named in
/// `redactedHeaders`. An exchange is recorded when its response body has been read to its end, or has failed (with
/// what arrived, and a comment saying why); one that fails before its head, and WebSocket traffic, are not (HAR
/// 1.2 has no place for them). Bodies are kept whole up to `maximumBodySize` bytes each; past that, the entry keeps
/// the first bytes and a comment.
public final class RecordingTransport: Transport {
    /// The fields whose values are never written: `authorization`, `proxy-authorization`, `cookie`, `set-cookie`.
    public static let defaultRedactedHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie",
    ]

    private let inner: any Transport
    private let file: URL?
    private let redacting: Set<String>
    private let maximumBodySize: Int
    private let recorded: Guarded<HTTPArchive>

    /// Records what passes through `transport`.
    ///
    /// - Parameters:
    ///   - transport: sends the requests.
    ///   - file: written again after each exchange, if given.
    ///   - redactedHeaders: more field names (any case) whose values are redacted, beside the defaults.
    ///   - maximumBodySize: the most bytes of each body kept; default 16 MiB.
    public init(
        wrapping transport: any Transport, file: URL? = nil, redactedHeaders: Set<String> = [],
        maximumBodySize: Int = 16 << 20
    ) {
        inner = transport
        self.file = file
        redacting = Self.defaultRedactedHeaders.union(redactedHeaders.map { $0.lowercased() })
        self.maximumBodySize = max(0, maximumBodySize)
        recorded = Guarded(HTTPArchive(creator: HTTPArchive.Creator(name: "Courier RecordingTransport", version: "1")))
    }

    /// What has been recorded so far.
    public var archive: HTTPArchive { recorded.current }

    /// Sends `request` through the wrapped transport, recording the request's body as it goes out and the response's
    /// as it is read.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let started = Date()
        var outgoing = request
        let sentBody = Guarded(Data())
        let limit = maximumBodySize
        if let body = request.body {
            if let data = body.data {
                sentBody.withLock { $0 = data.prefix(limit) }
            } else {
                outgoing.body = HTTPRequestBody(length: body.length, isReplayable: body.isReplayable) {
                    // Each attempt (a retry, a redirect's) starts the copy again.
                    sentBody.withLock { $0 = Data() }
                    let source = try body.makeChunks()
                    return DataChunks(makeNext: {
                        var chunks = source.makeAsyncIterator()
                        return {
                            let chunk = try await chunks.next()
                            if let chunk { sentBody.withLock { $0.append(chunk.prefix(max(0, limit - $0.count))) } }
                            return chunk
                        }
                    })
                }
            }
        }
        let response = try await inner.send(outgoing)
        let headArrived = Date()
        let received = Guarded((body: Data(), truncated: false, done: false))
        let record: @Sendable (String?) throws -> Void = { [self] failure in
            let (body, truncated, alreadyDone) = received.withLock { state in
                defer { state.done = true }
                return (state.body, state.truncated, state.done)
            }
            guard !alreadyDone else { return }
            var comments: [String] = []
            if truncated { comments.append("the body was cut to its first \(limit) bytes") }
            if let failure { comments.append("the body ended early: \(failure)") }
            let exchange = HTTPArchive.Entry.Exchange(
                request: StubbedRequest(
                    method: request.method, url: request.url, headers: request.headers, body: sentBody.current),
                statusCode: response.statusCode, httpVersion: response.httpVersion, headers: response.headers,
                body: body, started: started, headArrived: headArrived, ended: Date(),
                serverAddress: response.metrics?.remoteAddress,
                comment: comments.isEmpty ? nil : comments.joined(separator: "; "))
            try self.append(HTTPArchive.Entry(exchange, redacting: self.redacting))
        }
        var recording = response
        recording.body = DataChunks(makeNext: {
            var chunks = response.body.makeAsyncIterator()
            return {
                let chunk: Data?
                do {
                    chunk = try await chunks.next()
                } catch {
                    try? record(String(describing: error))
                    throw error
                }
                guard let chunk else {
                    try record(nil)
                    return nil
                }
                received.withLock { state in
                    let room = max(0, limit - state.body.count)
                    if chunk.count > room { state.truncated = true }
                    state.body.append(chunk.prefix(room))
                }
                return chunk
            }
        })
        return recording
    }

    /// Opens the WebSocket through the wrapped transport, unrecorded.
    public func openWebSocket(_ request: TransportRequest, configuration: WebSocketConfiguration) async throws
        -> any WebSocketConnection
    {
        try await inner.openWebSocket(request, configuration: configuration)
    }

    /// Shuts the wrapped transport down.
    public func shutdown() async {
        await inner.shutdown()
    }

    /// Writes what has been recorded to `file`.
    ///
    /// - Throws: what writing the file throws.
    public func write(to file: URL) throws {
        try archive.write(to: file)
    }

    /// Adds `entry` and writes the file, if there is one.
    ///
    /// - Throws: ``CourierError/fileOperationFailed(reason:underlyingError:context:)`` when the file cannot be
    ///   written: the exchange's body fails with it rather than leave a recording silently short.
    private func append(_ entry: HTTPArchive.Entry) throws {
        let archive = recorded.withLock { archive in
            archive.log.entries.append(entry)
            return archive
        }
        guard let file else { return }
        do {
            try archive.write(to: file)
        } catch {
            throw CourierError.fileOperationFailed(
                reason: "the HAR file \(file.path) cannot be written", underlyingError: error,
                context: CourierError.Context())
        }
    }
}
