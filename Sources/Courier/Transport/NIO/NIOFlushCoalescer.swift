import NIOCore

/// Gathers the flushes of one event-loop tick into one, on an HTTP/2 connection below NIOHTTP2's handler: every
/// stream an exchange opens flushes the connection, which made a socket write (and over TLS a write of its own
/// records) per request; held until the tasks already queued on the loop have run, the streams started together
/// leave in one write.
///
/// Invariant: every flush that reaches this handler is followed, before the loop's next tick, by one that goes on
/// toward the socket; a close first sends what is pending.
final class NIOFlushCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var flushPending = false
    private var removed = false

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.sendPendingFlush(context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        sendPendingFlush(context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sendPendingFlush(context)
        removed = true
    }

    private func sendPendingFlush(_ context: ChannelHandlerContext) {
        guard flushPending, !removed else { return }
        flushPending = false
        context.flush()
    }
}
