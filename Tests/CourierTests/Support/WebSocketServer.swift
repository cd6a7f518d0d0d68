import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

@testable import Courier

/// A WebSocket server on 127.0.0.1 (NIO's upgrader, with TLS when given a chain), for the WebSocket tests.
///
/// It echoes every message, sending those over 64 KiB in 64 KiB fragments, answers pings, and obeys commands sent as
/// text: `close CODE REASON` closes with that code and reason; `big N` sends an N-byte binary message in fragments;
/// `badutf8` sends a text frame that is not UTF-8. It counts the upgrade requests it saw, keeps their header fields,
/// and records the close frames clients sent; the first `refusing` upgrade requests it answers by closing the
/// connection.
final class WebSocketServer: Sendable {
    let port: Int
    /// `ws://127.0.0.1:<port>/socket`, or `wss://` with TLS.
    let url: URL
    private let channel: any Channel
    let upgrades: Locked<Int>
    let upgradeHeaders: Locked<[NIOHTTP1.HTTPHeaders]>
    let clientCloses: Locked<[(code: UInt16?, reason: String)]>

    private init(
        channel: any Channel, port: Int, url: URL, upgrades: Locked<Int>,
        upgradeHeaders: Locked<[NIOHTTP1.HTTPHeaders]>, clientCloses: Locked<[(code: UInt16?, reason: String)]>
    ) {
        self.channel = channel
        self.port = port
        self.url = url
        self.upgrades = upgrades
        self.upgradeHeaders = upgradeHeaders
        self.clientCloses = clientCloses
    }

    /// Starts the server; with `tls` (a chain, leaf first, and its key in PEM), over TLS.
    static func start(tls: (chainPEM: String, keyPEM: String)? = nil, refusing: Int = 0) async throws
        -> WebSocketServer
    {
        let upgrades = Locked(0)
        let upgradeHeaders = Locked<[NIOHTTP1.HTTPHeaders]>([])
        let closes = Locked<[(code: UInt16?, reason: String)]>([])
        let context: NIOSSLContext? = try tls.map { tls in
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(tls.chainPEM.utf8)).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(bytes: Array(tls.keyPEM.utf8), format: .pem)
            return try NIOSSLContext(
                configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
        }
        let (channel, port, _) = try await LoopbackServer.bind(path: "") { pipeline in
            if let context { try pipeline.addHandler(NIOSSLServerHandler(context: context)) }
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: 4 << 20, automaticErrorHandling: true,
                shouldUpgrade: { channel, head in
                    let count = upgrades.withLock {
                        $0 += 1
                        return $0
                    }
                    upgradeHeaders.withLock { $0.append(head.headers) }
                    if count <= refusing {
                        channel.close(promise: nil)
                        return channel.eventLoop.makeSucceededFuture(nil)
                    }
                    var headers = NIOHTTP1.HTTPHeaders()
                    if let offered = head.headers.first(name: "Sec-WebSocket-Protocol") {
                        headers.add(name: "Sec-WebSocket-Protocol", value: String(offered.split(separator: ",")[0]))
                    }
                    headers.add(name: "Set-Cookie", value: "socket=upgraded; Path=/")
                    return channel.eventLoop.makeSucceededFuture(headers)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(EchoHandler(closes: closes))
                    }
                })
            try pipeline.configureHTTPServerPipeline(
                withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        }
        guard let url = URL(string: "\(tls == nil ? "ws" : "wss")://127.0.0.1:\(port)/socket") else {
            throw FaultServerError.noPort
        }
        return WebSocketServer(
            channel: channel, port: port, url: url, upgrades: upgrades, upgradeHeaders: upgradeHeaders,
            clientCloses: closes)
    }

    func stop() async throws {
        try await channel.close()
    }
}

private final class EchoHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only; `closes` is a lock.
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let closes: Locked<[(code: UInt16?, reason: String)]>
    private var sentClose = false

    init(closes: Locked<[(code: UInt16?, reason: String)]>) {
        self.closes = closes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let text = String(buffer: frame.unmaskedData)
            let words = text.split(separator: " ", maxSplits: 2).map(String.init)
            if words.first == "close", words.count >= 2, let code = UInt16(words[1]) {
                var buffer = context.channel.allocator.buffer(capacity: 64)
                buffer.writeInteger(code)
                buffer.writeString(words.count > 2 ? words[2] : "")
                sentClose = true
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)), promise: nil)
            } else if words.first == "big", words.count == 2, let count = Int(words[1]) {
                let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
                send(context, .binary, context.channel.allocator.buffer(bytes: bytes))
            } else if text == "badutf8" {
                context.writeAndFlush(
                    wrapOutboundOut(
                        WebSocketFrame(
                            fin: true, opcode: .text, data: context.channel.allocator.buffer(bytes: [0x61, 0xFF, 0x62]))
                    ),
                    promise: nil)
            } else {
                send(context, .text, frame.unmaskedData)
            }
        case .binary:
            send(context, .binary, frame.unmaskedData)
        case .ping:
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readInteger(as: UInt16.self)
            closes.withLock { $0.append((code, payload.readString(length: payload.readableBytes) ?? "")) }
            if sentClose {
                context.close(promise: nil)
            } else {
                var answer = context.channel.allocator.buffer(capacity: 2)
                answer.writeInteger(code ?? 1000)
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer))
                )
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        default:
            break
        }
    }

    /// Sends a message, in 64 KiB fragments when it is larger.
    private func send(_ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ buffer: ByteBuffer) {
        var rest = buffer
        var first = true
        repeat {
            let slice = rest.readSlice(length: min(64 * 1024, rest.readableBytes)) ?? ByteBuffer()
            let frame = WebSocketFrame(
                fin: rest.readableBytes == 0, opcode: first ? opcode : .continuation, data: slice)
            context.write(wrapOutboundOut(frame), promise: nil)
            first = false
        } while rest.readableBytes > 0
        context.flush()
    }
}
