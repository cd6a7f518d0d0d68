import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

@testable import Courier

/// A WebSocket server on 127.0.0.1 that breaks the protocol on purpose: its `101` may carry any header fields, and
/// after the upgrade it writes bytes as they are (frames a real server could not send: masked, a 1-byte close, any
/// close code), floods pings without reading, or reads nothing until told.
///
/// The handshake is NIO's upgrader (a valid `Sec-WebSocket-Accept`); the frames the client sends are decoded and
/// recorded (``frames``), and a close frame from the client ends the connection.
final class HostileWebSocketServer: Sendable {
    /// What the server does once the connection is upgraded.
    enum Act: Sendable {
        /// Writes these bytes (see ``frame(_:payload:mask:)``), then reads what the client sends.
        case write([UInt8])
        /// Writes `count` pings, each carrying its number (from 1, a big-endian `UInt32`), then a text message
        /// `done`, without reading anything until all of it is written.
        case pingFlood(count: Int)
        /// Reads nothing until ``resumeReading()``.
        case readNothing
    }

    /// A frame the client sent, unmasked.
    struct Frame: Sendable {
        var opcode: WebSocketOpcode
        var payload: [UInt8]
    }

    /// `ws://127.0.0.1:<port>/`.
    let url: URL
    /// The frames the client sent, in order.
    let frames: Locked<[Frame]>
    private let channel: any Channel
    private let connections: Locked<[any Channel]>

    private init(channel: any Channel, url: URL, frames: Locked<[Frame]>, connections: Locked<[any Channel]>) {
        self.channel = channel
        self.url = url
        self.frames = frames
        self.connections = connections
    }

    /// Starts a server whose `101` adds `upgradeHeaders` and which then does `act`.
    static func start(upgradeHeaders: [(String, String)] = [], act: Act) async throws -> HostileWebSocketServer {
        let frames = Locked<[Frame]>([])
        let connections = Locked<[any Channel]>([])
        let (channel, port, _) = try await LoopbackServer.bind(path: "") { pipeline in
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: 1 << 25, automaticErrorHandling: false,
                shouldUpgrade: { channel, _ in
                    channel.eventLoop.makeSucceededFuture(NIOHTTP1.HTTPHeaders(upgradeHeaders))
                },
                upgradePipelineHandler: { channel, _ in
                    connections.withLock { $0.append(channel) }
                    return channel.eventLoop.makeCompletedFuture {
                        // First in the pipeline, so that what it writes skips NIO's frame encoder.
                        let writer = RawWriter()
                        try channel.pipeline.syncOperations.addHandler(writer, position: .first)
                        let context = try channel.pipeline.syncOperations.context(handler: writer)
                        let recorder = FrameRecorder(frames: frames, raw: context)
                        try channel.pipeline.syncOperations.addHandler(recorder)
                        recorder.perform(act, on: channel)
                    }
                })
            try pipeline.configureHTTPServerPipeline(
                withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        }
        guard let url = URL(string: "ws://127.0.0.1:\(port)/") else { throw FaultServerError.noPort }
        return HostileWebSocketServer(channel: channel, url: url, frames: frames, connections: connections)
    }

    /// Reads again after ``Act/readNothing``.
    func resumeReading() {
        for connection in connections.withLock({ $0 }) {
            connection.setOption(ChannelOptions.autoRead, value: true).whenSuccess { connection.read() }
        }
    }

    /// The bytes of one unfragmented frame from the server: `opcode` (0x1 text, 0x8 close, 0x9 ping…), masked with
    /// `mask` when given (which a server must never do).
    static func frame(_ opcode: UInt8, payload: [UInt8], mask: [UInt8]? = nil) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        switch payload.count {
        case ..<126: bytes.append(maskBit | UInt8(payload.count))
        case ..<65536: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        guard let mask else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// A close frame's bytes: `code` (none when `nil`) and `reason` as they are.
    static func close(_ code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
        frame(0x8, payload: (code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []) + reason)
    }

    func stop() async throws {
        for connection in connections.withLock({ $0 }) { connection.close(promise: nil) }
        try await channel.close()
    }
}

/// Writes bytes as they are: placed first in the pipeline, its context's writes go straight to the socket.
private final class RawWriter: ChannelOutboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only; it has no state.
    typealias OutboundIn = ByteBuffer
}

private final class FrameRecorder: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only (`perform` is called there too); `frames` is
    // a lock.
    typealias InboundIn = WebSocketFrame

    private let frames: Locked<[HostileWebSocketServer.Frame]>
    private let raw: ChannelHandlerContext

    init(frames: Locked<[HostileWebSocketServer.Frame]>, raw: ChannelHandlerContext) {
        self.frames = frames
        self.raw = raw
    }

    func perform(_ act: HostileWebSocketServer.Act, on channel: any Channel) {
        switch act {
        case .write(let bytes):
            raw.writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .readNothing:
            channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        case .pingFlood(let count):
            // Reads nothing until the flood is written: the client's pongs wait in its buffers or the socket's.
            channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            var buffer = channel.allocator.buffer(capacity: count * 6 + 8)
            for number in 1...UInt32(count) {
                buffer.writeBytes([0x89, 4])
                buffer.writeInteger(number)
            }
            buffer.writeBytes(HostileWebSocketServer.frame(0x1, payload: Array("done".utf8)))
            raw.writeAndFlush(NIOAny(buffer)).whenComplete { _ in
                channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        frames.withLock {
            $0.append(.init(opcode: frame.opcode, payload: Array(frame.unmaskedData.readableBytesView)))
        }
        if frame.opcode == .connectionClose {
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
