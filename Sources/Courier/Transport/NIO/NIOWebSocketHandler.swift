import Foundation
import NIOCore
import NIOWebSocket

/// Turns a WebSocket channel's frames into whole messages for its ``NIOWebSocketConnection``, on the event loop:
/// reassembles fragments, checks sizes and UTF-8, answers pings, and does the close handshake.
///
/// Any violation closes the connection with the code RFC 6455 gives it (1002 protocol, 1007 invalid UTF-8, 1009 too
/// big) and fails the connection's waiters with it.
final class NIOWebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let connection: NIOWebSocketConnection
    private let maximumMessageSize: Int
    /// The opcode and bytes of a fragmented message in progress.
    private var fragments: (opcode: WebSocketOpcode, data: ByteBuffer)?

    init(connection: NIOWebSocketConnection, maximumMessageSize: Int) {
        self.connection = connection
        self.maximumMessageSize = maximumMessageSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
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
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            connection.pongArrived()
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readInteger(as: UInt16.self).map(WebSocketCloseCode.init(rawValue:))
            let reason = payload.readString(length: payload.readableBytes) ?? ""
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
            guard
                let text = buffer.readableBytesView.withContiguousStorageIfAvailable({
                    String(validating: $0, as: UTF8.self)
                }) ?? String(validating: Array(buffer.readableBytesView), as: UTF8.self)
            else {
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

    /// Closes the connection with `code`: our close frame, then the channel.
    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketCloseCode, _ reason: String) {
        fragments = nil
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
