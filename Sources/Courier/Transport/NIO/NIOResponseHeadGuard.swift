import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Refuses an HTTP/1 response head whose status code is below 100, before AsyncHTTPClient sees it.
///
/// AsyncHTTPClient 1.37 takes any status below 200 for an informational head and its request state machine then
/// traps on what follows (`HTTP/1.1 000`, `001` and `099` crash the process). NIO's parser accepts such a status, so
/// any server could crash Courier with one line. This handler sits right after the response decoder, turns such a
/// head into ``CourierError/badServerResponse(reason:underlyingError:context:)`` and closes the connection; every
/// other part passes through untouched. Remove it once AsyncHTTPClient rejects these heads itself.
///
/// Installed by ``NIOTransport`` on every HTTP/1 connection and every HTTP/2 stream (its clients' debug
/// initializers), before a request is written to either. HTTP/2 needs it as much: NIOHTTP2 turns any integer
/// `:status` into a head.
final class NIOResponseHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// Set once a head was refused: nothing more is read from this connection.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), head.status.code < 100 {
            refused = true
            context.fireErrorCaught(
                CourierError.badServerResponse(
                    reason: "the status code \(head.status.code) is not an HTTP status (below 100)",
                    underlyingError: nil, context: CourierError.Context()))
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    /// Adds a guard to an HTTP/1 connection's pipeline right after AsyncHTTPClient's response decoder.
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(
                NIOResponseHeadGuard(),
                position: .after(try pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)))
        }
    }

    /// Adds a guard to an HTTP/2 stream's pipeline right after AsyncHTTPClient's HTTP/2-to-HTTP/1 codec.
    static func installOnHTTP2Stream(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(
                NIOResponseHeadGuard(),
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
