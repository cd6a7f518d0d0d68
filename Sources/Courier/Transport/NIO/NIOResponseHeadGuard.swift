import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Refuses the response heads AsyncHTTPClient would mishandle, before it sees them: a status code below 100, a
/// `101 Switching Protocols`, and informational heads without end.
///
/// AsyncHTTPClient 1.37 takes any status below 200 for an informational head and its request state machine then
/// traps on what follows (`HTTP/1.1 000`, `001` and `099` crash the process). NIO's parser accepts such a status, so
/// any server could crash Courier with one line. A `101` it takes for the final response, although Courier's
/// requests through AsyncHTTPClient cannot switch protocols (see ``InterimResponses``): the bytes after it are
/// another protocol, and the task would succeed with whatever they are. And it skips any number of other 1xx
/// heads, so a server could hold a request with them forever while bytes keep arriving.
///
/// Such a head becomes ``CourierError/badServerResponse(reason:underlyingError:context:)`` and the connection is
/// closed; every other part passes through untouched. Remove the status checks once AsyncHTTPClient makes them
/// itself.
///
/// Installed by ``NIOTransport`` on every HTTP/1 connection and every HTTP/2 stream (its clients' debug
/// initializers), before a request is written to either. HTTP/2 needs it as much: NIOHTTP2 turns any integer
/// `:status` into a head, and HTTP/2 has no `101` at all (RFC 9113, 8.6). The same handler stamps each final head
/// with the connection's facts (``NIOConnectionReporter``): one handler per stream, not two.
final class NIOResponseHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// Set once a head was refused: nothing more is read from this connection.
    private var refused = false
    /// Informational heads since the last final one.
    private var informational = 0
    /// What the connection's final heads are stamped with.
    private var report: NIOConnectionReporter.Report

    private init(report: NIOConnectionReporter.Report) {
        self.report = report
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        if let reason = refusal(of: head.status.code) {
            refused = true
            context.fireErrorCaught(
                CourierError.badServerResponse(reason: reason, underlyingError: nil, context: CourierError.Context()))
            context.close(promise: nil)
            return
        }
        guard head.status.code >= 200 else { return context.fireChannelRead(data) }
        report.stamp(&head.headers, version: head.version)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Why a head with `code` is refused, or `nil` to let it through.
    private func refusal(of code: UInt) -> String? {
        if code < 100 { return "the status code \(code) is not an HTTP status (below 100)" }
        if code == 101 { return InterimResponses.switchingProtocols }
        guard code < 200 else {
            informational = 0
            return nil
        }
        informational += 1
        return informational > InterimResponses.maximumCount ? InterimResponses.tooMany : nil
    }

    /// Adds a guard to an HTTP/1 connection's pipeline right after AsyncHTTPClient's response decoder.
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(
                NIOResponseHeadGuard(report: NIOConnectionReporter.connectionReport(channel)),
                position: .after(try pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)))
        }
    }

    /// Adds a guard to an HTTP/2 stream's pipeline right after AsyncHTTPClient's HTTP/2-to-HTTP/1 codec.
    static func installOnHTTP2Stream(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(
                NIOResponseHeadGuard(report: NIOConnectionReporter.streamReport(channel)),
                position: .after(try pipeline.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)))
        }
    }

}

extension Channel {
    /// Runs `body` with the pipeline's synchronous operations on the channel's event loop: at once when called
    /// there, else submitted. For the debug initializers, which AsyncHTTPClient may call from either.
    func onLoop(_ body: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void) -> EventLoopFuture<
        Void
    > {
        if eventLoop.inEventLoop {
            return eventLoop.makeCompletedFuture { try body(pipeline.syncOperations) }
        }
        return eventLoop.submit { try body(self.pipeline.syncOperations) }
    }
}
