import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP server for one resource that honours `Range` and `If-Range` as a static file server does (nginx's rules
/// for the forms Courier sends): for resumable downloads, streaming and backpressure tests.
///
/// `GET /file` answers `200` with the whole resource, or `206` with `Content-Range` for `Range: bytes=N-` when
/// `If-Range` is absent or equals the current `ETag`; a range that starts past the end is `416`. The body is written
/// in `chunkSize` pieces, each after the previous one was flushed to the socket and `chunkDelay` has passed, so a
/// client that stops reading stops the server too.
final class RangeServer: Sendable {
    struct Resource: Sendable {
        var data: Data
        var entityTag: String
        /// A `Cache-Control` value to send, if any.
        var cacheControl: String?
    }

    /// The port the server listens on, on 127.0.0.1.
    let port: Int
    /// `http://127.0.0.1:<port>/file`.
    let fileURL: URL
    private let channel: any Channel
    private let resource: Locked<Resource>
    /// The `Range`, `If-Range` and `If-None-Match` headers of every request, in order.
    private let log: Locked<[RequestRecord]>

    /// What the server saw of one request.
    struct RequestRecord: Sendable {
        var range: String?
        var ifRange: String?
        var ifNoneMatch: String?
    }

    private init(
        channel: any Channel, port: Int, fileURL: URL, resource: Locked<Resource>,
        log: Locked<[RequestRecord]>
    ) {
        self.channel = channel
        self.port = port
        self.fileURL = fileURL
        self.resource = resource
        self.log = log
    }

    /// Starts serving `data` with entity tag `entityTag` (and `Cache-Control: cacheControl` when given).
    ///
    /// A request whose `If-None-Match` equals the entity tag is answered `304 Not Modified`.
    static func start(
        _ data: Data, entityTag: String = "\"v1\"", cacheControl: String? = nil, chunkSize: Int = 16 * 1024,
        chunkDelay: TimeInterval = 0
    ) async throws -> RangeServer {
        let resource = Locked(Resource(data: data, entityTag: entityTag, cacheControl: cacheControl))
        let log = Locked([RequestRecord]())
        let delay = TimeAmount.nanoseconds(Int64(chunkDelay * 1_000_000_000))
        let (channel, port, url) = try await LoopbackServer.bind(path: "file") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(RangeHandler(resource: resource, log: log, chunkSize: chunkSize, chunkDelay: delay))
        }
        return RangeServer(channel: channel, port: port, fileURL: url, resource: resource, log: log)
    }

    /// Replaces the resource (a new version with a new entity tag).
    func replace(with data: Data, entityTag: String) {
        resource.withLock { $0 = Resource(data: data, entityTag: entityTag, cacheControl: $0.cacheControl) }
    }

    /// What the server saw of each request so far.
    var requests: [RequestRecord] { log.withLock { $0 } }

    /// Stops listening.
    func stop() async throws {
        try await channel.close()
    }
}

/// Answers `GET /file` per ``RangeServer``. Runs on its channel's event loop only.
private final class RangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let resource: Locked<RangeServer.Resource>
    private let log: Locked<[RangeServer.RequestRecord]>
    private let chunkSize: Int
    private let chunkDelay: TimeAmount
    private var head: HTTPRequestHead?

    init(
        resource: Locked<RangeServer.Resource>, log: Locked<[RangeServer.RequestRecord]>, chunkSize: Int,
        chunkDelay: TimeAmount
    ) {
        self.resource = resource
        self.log = log
        self.chunkSize = chunkSize
        self.chunkDelay = chunkDelay
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            if let head { respond(context, to: head) }
            head = nil
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(_ context: ChannelHandlerContext, to request: HTTPRequestHead) {
        let current = resource.withLock { $0 }
        let range = request.headers.first(name: "Range")
        let ifRange = request.headers.first(name: "If-Range")
        let ifNoneMatch = request.headers.first(name: "If-None-Match")
        log.withLock { $0.append(RangeServer.RequestRecord(range: range, ifRange: ifRange, ifNoneMatch: ifNoneMatch)) }
        var headers = HTTPHeaders([
            ("ETag", current.entityTag), ("Accept-Ranges", "bytes"), ("Date", HTTPDate.format(Date())),
        ])
        if let cacheControl = current.cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
        if ifNoneMatch == current.entityTag {
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers))),
                promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        var status = HTTPResponseStatus.ok
        var body = current.data[...]
        if let range, ifRange == nil || ifRange == current.entityTag,
            range.hasPrefix("bytes="), range.hasSuffix("-"), let first = Int(range.dropFirst(6).dropLast())
        {
            guard first < current.data.count else {
                headers.add(name: "Content-Range", value: "bytes */\(current.data.count)")
                headers.add(name: "Content-Length", value: "0")
                context.write(
                    wrapOutboundOut(
                        .head(HTTPResponseHead(version: .http1_1, status: .rangeNotSatisfiable, headers: headers))),
                    promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            status = .partialContent
            body = current.data[(current.data.startIndex + first)...]
            headers.add(name: "Content-Range", value: "bytes \(first)-\(current.data.count - 1)/\(current.data.count)")
        }
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Content-Type", value: "application/octet-stream")
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        writeBody(context, Data(body), from: 0)
    }

    /// Writes the next chunk once the previous one has gone out and the delay has passed.
    private func writeBody(_ context: ChannelHandlerContext, _ body: Data, from offset: Int) {
        guard offset < body.count else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let end = min(body.count, offset + chunkSize)
        let buffer = context.channel.allocator.buffer(bytes: body[offset..<end])
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenSuccess {
            if self.chunkDelay == .zero {
                self.writeBody(context, body, from: end)
            } else {
                context.eventLoop.assumeIsolated().scheduleTask(in: self.chunkDelay) {
                    self.writeBody(context, body, from: end)
                }
            }
        }
    }
}
