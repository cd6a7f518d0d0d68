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
/// client that stops reading stops the server too. At each of `holds` (offsets into the body sent) the body stops
/// until ``proceed()`` is called: a test can then know what the client has been sent, however far its transport
/// reads ahead.
final class RangeServer: Sendable {
    struct Resource: Sendable {
        var data: Data
        /// `nil` sends no `ETag`: a response with no validator.
        var entityTag: String?
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
    private let gate: Gate

    /// What the server saw of one request.
    struct RequestRecord: Sendable {
        var range: String?
        var ifRange: String?
        var ifNoneMatch: String?
    }

    private init(
        channel: any Channel, port: Int, fileURL: URL, resource: Locked<Resource>,
        log: Locked<[RequestRecord]>, gate: Gate
    ) {
        self.channel = channel
        self.port = port
        self.fileURL = fileURL
        self.resource = resource
        self.log = log
        self.gate = gate
    }

    /// Starts serving `data` with entity tag `entityTag` (and `Cache-Control: cacheControl` when given).
    ///
    /// A request whose `If-None-Match` equals the entity tag is answered `304 Not Modified`. `holds` are body
    /// offsets, in increasing order and multiples of `chunkSize`, where the body waits for ``proceed()``. The first
    /// `cuts` responses close their connection once `cutAfter` bytes of their body are sent (a multiple of
    /// `chunkSize`), as a dropped connection would.
    static func start(
        _ data: Data, entityTag: String? = "\"v1\"", cacheControl: String? = nil, chunkSize: Int = 16 * 1024,
        chunkDelay: TimeInterval = 0, holds: [Int] = [], cuts: Int = 0, cutAfter: Int = 0
    ) async throws -> RangeServer {
        let resource = Locked(Resource(data: data, entityTag: entityTag, cacheControl: cacheControl))
        let log = Locked([RequestRecord]())
        let gate = Gate(holds: holds)
        let delay = TimeAmount.nanoseconds(Int64(chunkDelay * 1_000_000_000))
        let cutsLeft = Locked(cuts)
        let (channel, port, url) = try await LoopbackServer.bind(path: "file") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(
                RangeHandler(
                    resource: resource, log: log, gate: gate, chunkSize: chunkSize, chunkDelay: delay,
                    cut: (cutsLeft, cutAfter)))
        }
        return RangeServer(channel: channel, port: port, fileURL: url, resource: resource, log: log, gate: gate)
    }

    /// Lets the body go on past the next of `holds`, now if it is waiting there, or as soon as it gets there.
    func proceed() {
        gate.proceed()
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

/// Where a ``RangeServer``'s body waits for ``RangeServer/proceed()``.
private final class Gate: Sendable {
    private struct State {
        /// The offsets not passed yet, in order.
        var holds: [Int]
        /// How many of them ``proceed()`` has opened ahead of the body getting there.
        var opened = 0
        /// The body's next step, when it is waiting at `holds[0]`.
        var waiting: Waiting?
    }

    private struct Waiting: Sendable {
        let loop: any EventLoop
        let next: NIOLoopBound<() -> Void>
    }

    private let state: Locked<State>

    init(holds: [Int]) {
        state = Locked(State(holds: holds))
    }

    /// Runs `next` now, unless `offset` is a hold that has not been opened yet: then when it is.
    func pass(_ offset: Int, on loop: any EventLoop, _ next: @escaping () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.holds.first == offset else { return true }
            if state.opened > 0 {
                state.opened -= 1
                state.holds.removeFirst()
                return true
            }
            state.waiting = Waiting(loop: loop, next: NIOLoopBound(next, eventLoop: loop))
            return false
        }
        if now { next() }
    }

    func proceed() {
        let waiting = state.withLock { state -> Waiting? in
            guard let waiting = state.waiting else {
                state.opened += 1
                return nil
            }
            state.waiting = nil
            state.holds.removeFirst()
            return waiting
        }
        if let waiting { waiting.loop.execute { waiting.next.value() } }
    }
}

/// Answers `GET /file` per ``RangeServer``. Runs on its channel's event loop only.
private final class RangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let resource: Locked<RangeServer.Resource>
    private let log: Locked<[RangeServer.RequestRecord]>
    private let gate: Gate
    private let chunkSize: Int
    private let chunkDelay: TimeAmount
    private var head: HTTPRequestHead?
    /// Responses still to be cut off, and after how many body bytes.
    private let cut: (left: Locked<Int>, after: Int)
    /// Whether the response being written is to be cut off.
    private var cutsThisResponse = false

    init(
        resource: Locked<RangeServer.Resource>, log: Locked<[RangeServer.RequestRecord]>, gate: Gate,
        chunkSize: Int, chunkDelay: TimeAmount, cut: (left: Locked<Int>, after: Int) = (Locked(0), 0)
    ) {
        self.cut = cut
        self.resource = resource
        self.log = log
        self.gate = gate
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
            ("Accept-Ranges", "bytes"), ("Date", HTTPDate.format(Date())),
        ])
        if let entityTag = current.entityTag { headers.add(name: "ETag", value: entityTag) }
        if let cacheControl = current.cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
        if let ifNoneMatch, ifNoneMatch == current.entityTag {
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
        cutsThisResponse = cut.left.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        writeBody(context, Data(body), from: 0)
    }

    /// Writes the next chunk once the previous one has gone out, the delay has passed and the gate lets it.
    private func writeBody(_ context: ChannelHandlerContext, _ body: Data, from offset: Int) {
        gate.pass(offset, on: context.eventLoop) { self.writeChunk(context, body, from: offset) }
    }

    private func writeChunk(_ context: ChannelHandlerContext, _ body: Data, from offset: Int) {
        if cutsThisResponse, offset >= cut.after {
            context.close(promise: nil)
            return
        }
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
