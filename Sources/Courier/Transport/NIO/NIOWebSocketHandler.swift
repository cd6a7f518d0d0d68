import Foundation
import NIOCore
import NIOWebSocket

/// Turns a WebSocket channel's frames into whole messages for its ``NIOWebSocketConnection``, on the event loop:
/// reassembles fragments, checks sizes and UTF-8, answers pings, and does the close handshake.
///
/// Any violation closes the connection with the code RFC 6455 gives it (1002 protocol, 1007 invalid UTF-8, 1009 too
/// big) and fails the connection's waiters with it: a masked frame (§5.1), a close frame with a 1-byte payload or a
/// code no endpoint may send (§7.4), a close reason that is not UTF-8 (§5.5.1).
///
/// Pings are answered once per read, for the latest ping only (§5.5.3 allows it), and never while the last pong is
/// still being written: a server flooding pings costs one pong in memory, however fast it sends and whether or not it
/// reads. While the channel is not writable it stops reading (``NIOWebSocketConnection/writabilityChanged(_:)``), so
/// what a server makes us write waits in its own buffers, not ours.
final class NIOWebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let connection: NIOWebSocketConnection
    private let maximumMessageSize: Int
    /// The opcode and bytes of a fragmented message in progress.
    private var fragments: (opcode: WebSocketOpcode, data: ByteBuffer)?
    /// The payload of the latest ping not answered yet.
    private var unansweredPing: ByteBuffer?
    /// A pong has been written and has not reached the socket yet.
    private var pongInFlight = false

    init(connection: NIOWebSocketConnection, maximumMessageSize: Int) {
        self.connection = connection
        self.maximumMessageSize = maximumMessageSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.maskKey == nil else {
            return fail(context, .protocolError, "a masked frame from the server")
        }
        guard frame.rsv1 == false, frame.rsv2 == false, frame.rsv3 == false else {
            return fail(context, .protocolError, "reserved bits set without an extension")
        }
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else {
                return fail(context, .protocolError, "a new message inside a fragmented one")
            }
            if frame.fin {
                deliver(context, frame.opcode, frame.unmaskedData)
            } else {
                fragments = (frame.opcode, frame.unmaskedData)
            }
        case .continuation:
            guard let (opcode, partial) = fragments else {
                return fail(context, .protocolError, "a continuation frame without a message")
            }
            var buffer = partial
            var part = frame.unmaskedData
            guard buffer.readableBytes + part.readableBytes <= maximumMessageSize else {
                return fail(context, .messageTooBig, "a message larger than \(maximumMessageSize) bytes")
            }
            fragments = nil  // lets `buffer` grow without a copy
            buffer.writeBuffer(&part)
            if frame.fin {
                deliver(context, opcode, buffer)
            } else {
                fragments = (opcode, buffer)
            }
        case .ping:
            // Answered when the read is complete, replacing any ping still unanswered.
            unansweredPing = frame.unmaskedData
        case .pong:
            connection.pongArrived()
        case .connectionClose:
            var payload = frame.unmaskedData
            guard payload.readableBytes != 1 else {
                return fail(context, .protocolError, "a close frame with a 1-byte payload")
            }
            let code = payload.readInteger(as: UInt16.self).map(WebSocketCloseCode.init(rawValue:))
            if let code, !code.isSendable {
                return fail(context, .protocolError, "the close code \(code), which a close frame cannot carry")
            }
            guard let reason = Self.utf8(payload) else {
                return fail(context, .invalidFramePayloadData, "a close reason that is not UTF-8")
            }
            unansweredPing = nil
            connection.closed(WebSocketClosedError(code: code ?? .noStatusReceived, reason: reason))
            if connection.claimCloseFrame() {
                // Answer with the same code, then close; the server closes the TCP connection first (RFC 6455 §7.1.1),
                // but a server that does not is not waited for.
                let answer = NIOWebSocketConnection.closeFrame(
                    code: code ?? .normalClosure, reason: "", allocator: context.channel.allocator)
                context.writeAndFlush(wrapOutboundOut(answer)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        default:
            fail(context, .protocolError, "an unknown opcode")
        }
    }

    private func deliver(_ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ buffer: ByteBuffer) {
        guard buffer.readableBytes <= maximumMessageSize else {
            return fail(context, .messageTooBig, "a message larger than \(maximumMessageSize) bytes")
        }
        let message: WebSocketMessage
        if opcode == .text {
            guard let text = Self.utf8(buffer) else {
                return fail(context, .invalidFramePayloadData, "a text message that is not UTF-8")
            }
            message = .string(text)
        } else {
            message = .data(Data(buffer.readableBytesView))
        }
        if connection.arrived(message) {
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    /// The buffer's bytes as a string, or `nil` when they are not UTF-8.
    private static func utf8(_ buffer: ByteBuffer) -> String? {
        buffer.readableBytesView.withContiguousStorageIfAvailable { String(validating: $0, as: UTF8.self) }
            ?? String(validating: Array(buffer.readableBytesView), as: UTF8.self)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        answerPing(context)
        context.fireChannelReadComplete()
    }

    /// Writes a pong for the latest ping, unless one is still being written (it is answered once that one is out) or
    /// a close frame has been sent.
    private func answerPing(_ context: ChannelHandlerContext) {
        guard !pongInFlight, let payload = unansweredPing else { return }
        unansweredPing = nil
        guard !connection.hasSentClose else { return }
        pongInFlight = true
        let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: payload)
        context.writeAndFlush(wrapOutboundOut(pong)).assumeIsolated().whenComplete { _ in
            self.pongInFlight = false
            self.answerPing(context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connection.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// Closes the connection with `code`: our close frame, then the channel.
    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketCloseCode, _ reason: String) {
        fragments = nil
        unansweredPing = nil
        connection.closed(WebSocketClosedError(code: code, reason: reason))
        guard connection.claimCloseFrame() else { return context.close(promise: nil) }
        let frame = NIOWebSocketConnection.closeFrame(code: code, reason: reason, allocator: context.channel.allocator)
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error as? NIOWebSocketError {
        case .invalidFrameLength:
            fail(context, .messageTooBig, "a frame larger than \(maximumMessageSize) bytes")
        case .fragmentedControlFrame, .multiByteControlFrameLength:
            fail(context, .protocolError, "a malformed control frame")
        case nil:
            connection.closed(WebSocketClosedError(code: .abnormalClosure, reason: "\(error)"))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed(
            WebSocketClosedError(code: .abnormalClosure, reason: "the connection ended without a close frame"))
        context.fireChannelInactive()
    }
}
