import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression

/// The HTTP/2 side of one of ``NIOHTTP1Pool``'s connections: each exchange is a stream, run by the same
/// ``NIOHTTP1ExchangeHandler`` as an HTTP/1.1 exchange behind NIOHTTP2's HTTP/1 translation, so both protocols get
/// the same response checks, body limits and timing.
///
/// Invariant: each stream's end is reported once (`ended`), whether its response ended, it failed, or it never
/// opened.
final class NIOHTTP2Streams: Sendable {
    private let multiplexer: NIOLoopBound<HTTP2StreamMultiplexer>
    private let watcher: NIOLoopBound<NIOHTTP2Watcher>
    private let decompressionLimit: NIOHTTPDecompression.DecompressionLimit?
    private let facts: NIOConnectionFacts
    /// Streams opened so far, for each exchange's ``NIOConnectionFacts/isReused``; touched on the loop only.
    private let opened: NIOLoopBoundBox<Int>

    /// The most bytes a stream's window lets the server send ahead of the reader, per stream.
    static let targetWindowSize = 8 * 1024 * 1024

    /// Sets up `pipeline` (after the handlers already in it) to speak HTTP/2 as a client: a flush coalescer, NIOHTTP2's
    /// handler (server push off, its default header-list limit), the watcher of the server's settings and `GOAWAY`,
    /// and the stream multiplexer. Call on the channel's loop.
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations, channel: any Channel,
        decompressionLimit: NIOHTTPDecompression.DecompressionLimit?, facts: NIOConnectionFacts
    ) throws -> NIOHTTP2Streams {
        let watcher = NIOHTTP2Watcher()
        let multiplexer = HTTP2StreamMultiplexer(
            mode: .client, channel: channel, targetWindowSize: targetWindowSize, inboundStreamInitializer: nil)
        // Below NIOHTTP2's handler, so that the streams one tick opens leave in one socket write.
        try pipeline.addHandler(NIOFlushCoalescer())
        try pipeline.addHandler(
            NIOHTTP2Handler(
                mode: .client, initialSettings: nioDefaultSettings + [HTTP2Setting(parameter: .enablePush, value: 0)]))
        try pipeline.addHandler(watcher)
        try pipeline.addHandler(multiplexer)
        return NIOHTTP2Streams(
            multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop),
            watcher: NIOLoopBound(watcher, eventLoop: channel.eventLoop), decompressionLimit: decompressionLimit,
            facts: facts, opened: NIOLoopBoundBox(0, eventLoop: channel.eventLoop))
    }

    private init(
        multiplexer: NIOLoopBound<HTTP2StreamMultiplexer>, watcher: NIOLoopBound<NIOHTTP2Watcher>,
        decompressionLimit: NIOHTTPDecompression.DecompressionLimit?, facts: NIOConnectionFacts,
        opened: NIOLoopBoundBox<Int>
    ) {
        self.multiplexer = multiplexer
        self.watcher = watcher
        self.decompressionLimit = decompressionLimit
        self.facts = facts
        self.opened = opened
    }

    /// The streams the server allows at once, once its settings said so.
    var streamLimit: Int? { watcher.value.streamLimit }

    /// Tells the connection what to call, on its loop, when the server changes its stream limit, sends `GOAWAY`,
    /// and when the connection closes. Call on the loop.
    func observe(
        streamLimit: @escaping (Int) -> Void, goAway: @escaping () -> Void, closed: @escaping () -> Void
    ) {
        let watcher = watcher.value
        watcher.onStreamLimit = streamLimit
        watcher.onGoAway = goAway
        watcher.onClosed = closed
    }

    /// Runs `exchange` on a new stream; `ended` is called once when the stream is done. Call on the loop.
    func run(_ exchange: NIOHTTP1Exchange, ended: @escaping @Sendable () -> Void) {
        let loop = multiplexer.eventLoop
        let decompressionLimit = decompressionLimit
        var streamFacts = facts
        streamFacts.isReused = opened.value > 0
        opened.value += 1
        let facts = streamFacts
        let once = NIOLoopBound(NIOStreamEnd(ended), eventLoop: loop)
        let promise = loop.makePromise(of: (any Channel).self)
        multiplexer.value.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                let sync = stream.pipeline.syncOperations
                try sync.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                if let decompressionLimit {
                    try sync.addHandler(NIOHTTPResponseDecompressor(limit: decompressionLimit))
                }
                let handler = NIOHTTP1ExchangeHandler(stream: facts)
                handler.onReusable = { once.value.fire() }
                handler.onClosed = { once.value.fire() }
                try sync.addHandler(handler)
            }
        }
        promise.futureResult.whenComplete { result in
            switch result {
            case .success(let stream):
                guard let handler = try? stream.pipeline.syncOperations.handler(type: NIOHTTP1ExchangeHandler.self)
                else {
                    stream.close(promise: nil)
                    exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
                    return once.value.fire()
                }
                exchange.attach(to: NIOHTTP2StreamCarrier(stream: stream, handler: handler))
                handler.start(exchange)
            case .failure(let error):
                exchange.finish(.failure(error), sawHead: false)
                once.value.fire()
            }
        }
    }
}

/// Calls its closure once.
private final class NIOStreamEnd {
    private var ended: (@Sendable () -> Void)?

    init(_ ended: @escaping @Sendable () -> Void) {
        self.ended = ended
    }

    func fire() {
        let ended = self.ended
        self.ended = nil
        ended?()
    }
}

/// What an exchange running on a stream needs to give up on its response when it is cancelled: the stream closes
/// (`RST_STREAM`), the connection and its other streams go on.
final class NIOHTTP2StreamCarrier: NIOExchangeCarrier {
    private let stream: any Channel
    private let handler: NIOLoopBound<NIOHTTP1ExchangeHandler>

    init(stream: any Channel, handler: NIOHTTP1ExchangeHandler) {
        self.stream = stream
        self.handler = NIOLoopBound(handler, eventLoop: stream.eventLoop)
    }

    func abandonFinishedExchange() {
        let handler = handler
        stream.eventLoop.execute { handler.value.abandonFinishedExchange() }
    }
}

/// Watches an HTTP/2 connection's frames between NIOHTTP2's handler and the multiplexer, passing them on: the
/// server's stream limit (`SETTINGS_MAX_CONCURRENT_STREAMS`), its `GOAWAY`, and the connection's close.
final class NIOHTTP2Watcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    /// The last stream limit the server set.
    private(set) var streamLimit: Int?
    var onStreamLimit: ((Int) -> Void)?
    var onGoAway: (() -> Void)?
    var onClosed: (() -> Void)?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            // A frame may carry the setting more than once: the last counts.
            if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams }) {
                streamLimit = limit.value
                onStreamLimit?(limit.value)
            }
        case .goAway:
            let goAway = onGoAway
            onGoAway = nil
            goAway?()
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let closed = onClosed
        (onClosed, onGoAway, onStreamLimit) = (nil, nil, nil)
        closed?()
        context.fireChannelInactive()
    }
}
