import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP server for the image downloader's tests: `GET /<name>` answers `image/png` with ``image(named:)``'s
/// bytes (a small PNG whose size depends on the name), `/bad/<name>` with bytes that are not an image. It counts what
/// the downloader's guarantees are about: requests per path, requests waiting for an answer now and at most,
/// connections accepted and still open.
///
/// While ``isHolding`` is `true`, answers wait until ``releaseAll()``; a held request still counts as waiting.
final class ImageServer: Sendable {
    struct Record {
        var paths: [String] = []
        var waiting = 0
        var maxWaiting = 0
        var connections = 0
        var open: [ObjectIdentifier: any Channel] = [:]
        var holding = false
        var held: [@Sendable () -> Void] = []
    }

    let baseURL: URL
    private let channel: any Channel
    private let record: Locked<Record>
    /// How long each answer waits before it is written.
    let delay: TimeAmount

    private init(channel: any Channel, baseURL: URL, record: Locked<Record>, delay: TimeAmount) {
        self.channel = channel
        self.baseURL = baseURL
        self.record = record
        self.delay = delay
    }

    /// Starts a server on a free port of 127.0.0.1; each answer waits `delay` first.
    static func start(delay: TimeAmount = .zero, holding: Bool = false) async throws -> ImageServer {
        let record = Locked(Record(holding: holding))
        let (channel, _, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(ImageServerHandler(record: record, delay: delay))
        }
        return ImageServer(channel: channel, baseURL: url, record: record, delay: delay)
    }

    /// The URL of the image `name`.
    func url(_ name: String) -> URL { baseURL.appendingPathComponent(name) }

    /// The PNG served for `name`: 1 + (name's UTF-8 length) pixels wide, 2 high, RGB.
    static func image(named name: String) -> Data {
        TestPNG.pattern(width: 1 + name.utf8.count, height: 2, colorType: .rgb, depth: 8, interlaced: false).data
    }

    /// The paths requested so far, in the order the requests arrived.
    var paths: [String] { record.withLock { $0.paths } }
    /// Requests read and not answered yet.
    var waitingCount: Int { record.withLock { $0.waiting } }
    /// The most requests ever waiting at once.
    var maxWaitingCount: Int { record.withLock { $0.maxWaiting } }
    /// Connections accepted so far.
    var connectionCount: Int { record.withLock { $0.connections } }
    /// Connections open now.
    var openConnectionCount: Int { record.withLock { $0.open.count } }
    /// Whether answers wait for ``releaseAll()``.
    var isHolding: Bool { record.withLock { $0.holding } }

    /// Answers every held request and stops holding.
    func releaseAll() {
        let held = record.withLock { record -> [@Sendable () -> Void] in
            record.holding = false
            defer { record.held = [] }
            return record.held
        }
        held.forEach { $0() }
    }

    func stop() async throws {
        releaseAll()
        let open = record.withLock { Array($0.open.values) }
        for channel in open { try? await channel.close() }
        try await channel.close()
    }
}

private final class ImageServerHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only; `record` is a lock.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let record: Locked<ImageServer.Record>
    private let delay: TimeAmount
    private var path = ""
    /// Requests on this connection read and not answered; they stop counting as waiting when it closes.
    private var unanswered = 0

    init(record: Locked<ImageServer.Record>, delay: TimeAmount) {
        self.record = record
        self.delay = delay
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        record.withLock {
            $0.connections += 1
            $0.open[ObjectIdentifier(channel)] = channel
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let id = ObjectIdentifier(context.channel)
        let unanswered = unanswered
        self.unanswered = 0
        record.withLock {
            _ = $0.open.removeValue(forKey: id)
            $0.waiting -= unanswered
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = String(head.uri.split(separator: "?").first ?? "")
        case .body:
            break
        case .end:
            let path = path
            unanswered += 1
            let holding = record.withLock { record -> Bool in
                record.paths.append(path)
                record.waiting += 1
                record.maxWaiting = max(record.maxWaiting, record.waiting)
                return record.holding
            }
            let loop = context.eventLoop
            let channel = context.channel
            let delay = delay
            let answer: @Sendable () -> Void = { [record, self] in
                loop.scheduleTask(in: delay) {
                    guard self.unanswered > 0, channel.isActive else { return }
                    self.unanswered -= 1
                    record.withLock { $0.waiting -= 1 }
                    let body: Data
                    var headers = NIOHTTP1.HTTPHeaders()
                    body =
                        path.hasPrefix("/bad/")
                        ? Data("not an image".utf8) : ImageServer.image(named: String(path.dropFirst()))
                    headers.add(name: "Content-Type", value: "image/png")
                    headers.add(name: "Content-Length", value: String(body.count))
                    headers.add(name: "Cache-Control", value: "no-store")
                    channel.write(
                        HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: headers)),
                        promise: nil)
                    channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
                    channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
                }
            }
            if holding {
                // Re-check under the lock: releaseAll() may have run since.
                let stillHolding = record.withLock { record -> Bool in
                    guard record.holding else { return false }
                    record.held.append(answer)
                    return true
                }
                if !stillHolding { answer() }
            } else {
                answer()
            }
        }
    }
}
