import NIOCore
import NIOSSL
import NIOTLS

/// Waits in a new TLS connection's pipeline for the handshake, then has the pipeline set up for the protocol ALPN
/// chose and reports it; fails with the handshake's error, or when the connection closes or the handshake takes
/// longer than `timeout`. Removes itself once done.
///
/// Set up synchronously, inside the handshake's event: bytes that came with the end of the handshake (an HTTP/2
/// server's first `SETTINGS`) reach the new handlers, never an unconfigured pipeline.
final class NIOTLSNegotiation: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// The protocol the handshake chose.
    enum Negotiated: Sendable {
        case http1
        case http2
    }

    private var promise: EventLoopPromise<Negotiated>?
    private let configure: (Negotiated, ChannelPipeline.SynchronousOperations) throws -> Void
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    /// - Parameter configure: sets up the pipeline, after this handler, for the chosen protocol.
    init(
        promise: EventLoopPromise<Negotiated>, timeout: TimeAmount,
        configure: @escaping (Negotiated, ChannelPipeline.SynchronousOperations) throws -> Void
    ) {
        self.promise = promise
        self.timeout = timeout
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let timeout = timeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            bound.value.handler.fail(ChannelError.connectTimeout(timeout), context: bound.value.context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent, case .handshakeCompleted(let chosen) = event else {
            return context.fireUserInboundEventTriggered(event)
        }
        timer?.cancel()
        let negotiated: Negotiated = chosen == "h2" ? .http2 : .http1
        do {
            try configure(negotiated, context.pipeline.syncOperations)
        } catch {
            return fail(error, context: context)
        }
        let promise = self.promise
        self.promise = nil
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        promise?.succeed(negotiated)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        timer?.cancel()
        let promise = self.promise
        self.promise = nil
        promise?.fail(error)
        context.close(promise: nil)
    }
}
