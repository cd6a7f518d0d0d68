import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression

/// What runs an exchange and can give up on its response when the exchange is cancelled: a connection, or an HTTP/2
/// stream.
protocol NIOExchangeCarrier: AnyObject, Sendable {
    /// Closes what carries the exchange if the exchange was finished (cancelled) before its response ended.
    func abandonFinishedExchange()
}

/// One connection of ``NIOHTTP1Pool``: plain or TLS, HTTP/1.1 (one exchange at a time, kept open between exchanges
/// while the server allows it) or HTTP/2 (each exchange a stream, ``NIOHTTP2Streams``).
///
/// Everything about an exchange in flight lives in its ``NIOHTTP1ExchangeHandler``, touched only on the channel's
/// event loop; this object is what the pool holds and hands exchanges to, from any thread.
final class NIOHTTP1Connection: NIOExchangeCarrier {
    let channel: any Channel
    let origin: NIOHTTP1Target.Origin
    private let protocolHandler: Spoken

    private enum Spoken: Sendable {
        case http1(NIOLoopBound<NIOHTTP1ExchangeHandler>)
        case http2(NIOHTTP2Streams)
    }

    /// Wraps a connected HTTP/1.1 channel set up by ``configure(_:decompressionLimit:)``, whose connecting began
    /// at `connectStart` (and whose TLS handshake, if any, at `secureStart`). Call on the channel's loop.
    init(channel: any Channel, origin: NIOHTTP1Target.Origin, connectStart: Date, secureStart: Date?) throws {
        self.channel = channel
        self.origin = origin
        let handler = try channel.pipeline.syncOperations.handler(type: NIOHTTP1ExchangeHandler.self)
        handler.connected = (connectStart, secureStart, Date())
        handler.tlsVersion = NIOConnectionReporter.tlsVersion(of: channel.pipeline.syncOperations)
        handler.remoteAddress = NIOConnectionReporter.remoteAddress(of: channel)
        protocolHandler = .http1(NIOLoopBound(handler, eventLoop: channel.eventLoop))
    }

    /// Wraps a connected channel that speaks HTTP/2 through `streams`.
    init(channel: any Channel, origin: NIOHTTP1Target.Origin, streams: NIOHTTP2Streams) {
        self.channel = channel
        self.origin = origin
        protocolHandler = .http2(streams)
    }

    /// The HTTP/2 streams, when the connection speaks HTTP/2.
    var streams: NIOHTTP2Streams? {
        if case .http2(let streams) = protocolHandler { return streams }
        return nil
    }

    /// Sets up a new channel's pipeline: NIO's HTTP/1 encoder and decoder (informational heads forwarded, so the
    /// handler skips them itself), the decompressor when asked, and the exchange handler.
    static func configure(_ channel: any Channel, decompressionLimit: NIOHTTPDecompression.DecompressionLimit?) throws {
        try configure(channel.pipeline.syncOperations, decompressionLimit: decompressionLimit)
    }

    /// ``configure(_:decompressionLimit:)`` on a pipeline, after the handlers already in it.
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations, decompressionLimit: NIOHTTPDecompression.DecompressionLimit?
    ) throws {
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        if let decompressionLimit {
            try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: decompressionLimit))
        }
        try pipeline.addHandler(NIOHTTP1ExchangeHandler())
    }

    /// Tells an HTTP/1.1 connection what to call, on its loop, when it can take another exchange and when it has
    /// closed. Call on the channel's loop, before the first exchange.
    func observe(reusable: @escaping () -> Void, closed: @escaping () -> Void) {
        // Closed before anyone could hear of it: the close is reported now, once.
        guard channel.isActive else { return closed() }
        guard case .http1(let handler) = protocolHandler else { return }
        handler.value.onReusable = reusable
        handler.value.onClosed = closed
    }

    /// Runs `exchange`, on the channel's loop; over HTTP/2, `streamEnded` is called once its stream is done.
    func run(_ exchange: NIOHTTP1Exchange, streamEnded: (@Sendable () -> Void)? = nil) {
        switch protocolHandler {
        case .http1(let handler):
            exchange.attach(to: self)
            let loop = channel.eventLoop
            if loop.inEventLoop {
                handler.value.start(exchange)
            } else {
                loop.execute { handler.value.start(exchange) }
            }
        case .http2(let streams):
            let ended = streamEnded ?? {}
            let loop = channel.eventLoop
            if loop.inEventLoop {
                streams.run(exchange, ended: ended)
            } else {
                loop.execute { streams.run(exchange, ended: ended) }
            }
        }
    }

    /// Closes the connection if the exchange on it was cancelled before its response ended: a half-read response
    /// leaves it unusable. (An HTTP/2 exchange's stream is closed instead, by its own carrier.)
    func abandonFinishedExchange() {
        guard case .http1(let handler) = protocolHandler else { return }
        channel.eventLoop.execute { handler.value.abandonFinishedExchange() }
    }

    /// Closes the connection; an exchange in flight fails.
    func close() {
        channel.close(promise: nil)
    }
}

/// Runs ``NIOHTTP1Connection``'s exchanges: writes each request whole, gathers its response, and tells the pool
/// when the connection is free again or closed. Lives on the channel's event loop.
///
/// Invariant: at most one exchange at a time; an exchange ends exactly once, by its response's end, an error, or the
/// channel's close; after any error the connection is closed, never reused. A connection is offered for the next
/// exchange only once everything read with its last response has been parsed (``channelReadComplete(context:)``),
/// so bytes a server sent past the response (a second, unsolicited response, or a body a `HEAD`, `204` or `304`
/// cannot have) close the connection instead of answering the next request. The response is handed to its exchange
/// just after the connection is back in the pool, so a caller that sends its next request at once finds it there.
final class NIOHTTP1ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        case idle
        case waitingForHead(NIOHTTP1Exchange)
        case receivingBody(NIOHTTP1Exchange, HTTPResponseHead, ByteBuffer?)
        case closed
    }

    private var state = State.idle
    private var context: ChannelHandlerContext?
    /// When connecting began and when the connection was ready.
    var connected: (start: Date, secureStart: Date?, ready: Date)?
    /// The connection's TLS version, over TLS.
    var tlsVersion: String?
    /// The peer's IP address.
    var remoteAddress: String?
    /// On an HTTP/2 stream: its connection's facts, and the request goes out without the fields HTTP/2 forbids.
    private let streamFacts: NIOConnectionFacts?
    /// Exchanges written so far.
    private var exchangesStarted = 0
    /// The dates of the exchange in flight.
    private var timing = NIOExchangeTiming()
    /// The request asked for the connection to close after its response.
    private var requestCloses = false
    /// A response ended on a connection that may be reused: the pool hears of it when the read that brought the end
    /// is done.
    private var reusableAfterRead = false
    /// That response, handed to its exchange once the pool has the connection back (or the connection has failed).
    private var ended: (exchange: NIOHTTP1Exchange, response: NIOBodyGatherer.Gathered)?
    /// Informational heads of the exchange in flight.
    private var informational = 0
    var onReusable: (() -> Void)?
    var onClosed: (() -> Void)?

    /// A handler for a connection's exchanges, one at a time.
    init() {
        streamFacts = nil
    }

    /// A handler for the one exchange of an HTTP/2 stream of a connection with `facts`.
    init(stream facts: NIOConnectionFacts) {
        streamFacts = facts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `exchange`'s request; an exchange handed to a connection that has closed meanwhile fails as a lost
    /// connection without a response (so an idempotent request may go out again on another).
    func start(_ exchange: NIOHTTP1Exchange) {
        guard case .idle = state, let context, context.channel.isActive else {
            exchange.finish(.failure(ChannelError.eof), sawHead: false)
            return
        }
        guard !exchange.isFinished else {
            onReusable?()  // cancelled on its way here: the connection was never used
            return
        }
        state = .waitingForHead(exchange)
        timing = NIOExchangeTiming(requestStart: Date())
        var head = exchange.head
        if let streamFacts {
            timing.connection = streamFacts
            // Connection-specific fields are malformed in HTTP/2 (RFC 9113 §8.2.2); the stream carries no others.
            for name in ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"] {
                head.headers.remove(name: name)
            }
            if head.headers["te"].contains(where: { !$0.caseInsensitiveEquals("trailers") }) {
                head.headers.remove(name: "te")
            }
        } else {
            if let connected {
                timing.connection = NIOConnectionFacts(
                    isReused: exchangesStarted > 0, connectStart: connected.start,
                    secureConnectionStart: connected.secureStart, ready: connected.ready, tlsVersion: tlsVersion,
                    protocolName: "http/1.1", remoteAddress: remoteAddress)
            }
            requestCloses = exchange.head.headers[canonicalForm: "connection"].contains {
                $0.caseInsensitiveEquals("close")
            }
        }
        exchangesStarted += 1
        informational = 0
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body = exchange.body {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // NIO writes to the socket within the flush when it can take the bytes, which a new request's usually can.
        timing.requestEnd = Date()
    }

    /// Closes the connection if its exchange was finished from outside (cancelled) while its response is still
    /// on the way.
    func abandonFinishedExchange() {
        switch state {
        case .waitingForHead(let exchange), .receivingBody(let exchange, _, _):
            if exchange.isFinished { context?.close(promise: nil) }
        case .idle, .closed:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .waitingForHead(let exchange) = state else {
                return fail(
                    CourierError.badServerResponse(
                        reason: "a response arrived that no request asked for", underlyingError: nil,
                        context: CourierError.Context()))
            }
            // NIO's parser takes any three digits for a status; below 100 is not HTTP, and a 101 leaves the
            // connection in another protocol (see InterimResponses).
            if head.status.code < 100 || head.status.code == 101 {
                let reason =
                    head.status.code == 101
                    ? InterimResponses.switchingProtocols : "the status code \(head.status.code) is not an HTTP status"
                return fail(
                    CourierError.badServerResponse(
                        reason: reason, underlyingError: nil, context: CourierError.Context()))
            }
            if head.status.code < 200 {
                // Informational (100 Continue, 103): the final head follows, unless a server sends them without end.
                informational += 1
                guard informational > InterimResponses.maximumCount else { return }
                return fail(
                    CourierError.badServerResponse(
                        reason: InterimResponses.tooMany, underlyingError: nil,
                        context: CourierError.Context()))
            }
            if let limit = exchange.maximumBodySize,
                CollectedBodyLimit.declaredLengthExceeds(
                    limit, method: exchange.head.method.rawValue, statusCode: Int(head.status.code),
                    contentLength: head.headers.first(name: "content-length"),
                    contentEncoding: head.headers.first(name: "content-encoding"))
            {
                return fail(CollectedBodyLimit.error(limit))
            }
            state = .receivingBody(exchange, head, nil)
            timing.responseStart = Date()
            if head.version.major == 1, head.version != .http1_1 {
                timing.connection?.protocolName = "http/\(head.version.major).\(head.version.minor)"
            }
            if let smallHead = exchange.smallHead,
                let length = head.headers.first(name: "content-length").flatMap({ Int($0) }),
                length <= NIOBodyGatherer.smallBody
            {
                smallHead()
            }
            exchange.activity()
        case .body(var part):
            guard case .receivingBody(let exchange, let head, var body) = state else {
                return fail(ChannelError.inappropriateOperationForState)
            }
            if let limit = exchange.maximumBodySize, part.readableBytes > limit - (body?.readableBytes ?? 0) {
                return fail(CollectedBodyLimit.error(limit))
            }
            state = .idle  // lets `body` be appended to without a copy
            if body == nil {
                body = part
            } else {
                body?.writeBuffer(&part)
            }
            state = .receivingBody(exchange, head, body)
            exchange.activity()
        case .end:
            guard case .receivingBody(let exchange, let head, let body) = state else {
                return fail(ChannelError.inappropriateOperationForState)
            }
            let reusable = head.isKeepAlive && !requestCloses
            state = reusable ? .idle : .closed
            timing.responseEnd = Date()
            let response = NIOBodyGatherer.Gathered(head: head, body: body ?? ByteBuffer(), timing: timing)
            if reusable {
                ended = (exchange, response)
                reusableAfterRead = true
            } else {
                exchange.finish(.success(response), sawHead: true)
                // An HTTP/2 stream (whose translated head never reads as keep-alive) closes by itself once both
                // sides have ended: closing it here would reset it, an RST_STREAM and a socket write per request.
                if streamFacts == nil { context.close(promise: nil) }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Whatever came with the response has been parsed: anything past it (another head, bytes that are not HTTP)
        // has closed the connection by now, and only a clean one goes back to the pool.
        if reusableAfterRead {
            reusableAfterRead = false
            if case .idle = state, context.channel.isActive { onReusable?() }
        }
        handOverEnded()
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A body that runs until the close has already ended (the decoder ends it first); anything else in flight
        // was cut off.
        end(with: ChannelError.eof)
        onClosed?()
        onClosed = nil
        onReusable = nil
        context.fireChannelInactive()
    }

    /// Ends the exchange in flight with `error` and closes the connection.
    private func fail(_ error: any Error) {
        end(with: error)
        context?.close(promise: nil)
    }

    /// Hands a response that ended whole to its exchange, if one is waiting.
    private func handOverEnded() {
        guard let ended else { return }
        self.ended = nil
        ended.exchange.finish(.success(ended.response), sawHead: true)
    }

    private func end(with error: any Error) {
        // A response that ended whole before the error is still the exchange's.
        handOverEnded()
        reusableAfterRead = false
        switch state {
        case .waitingForHead(let exchange):
            exchange.finish(.failure(error), sawHead: false)
        case .receivingBody(let exchange, _, _):
            exchange.finish(.failure(error), sawHead: true)
        case .idle, .closed:
            break
        }
        state = .closed
    }
}
