import CourierFixtures
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A finished HTTP/2 exchange leaves its stream to close as the protocol closes it (both sides' END_STREAM), and
/// does not reset it: a reset per request is a frame and a socket write each, and servers that guard against
/// rapid resets (CVE-2023-44487) count them against the client.
@Suite(.timeLimit(.minutes(1)))
struct HTTP2StreamEndTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "HTTP/2 stream end") } catch {
            fatalError("certificates: \(error)")
        }
    }()

    /// Counts the frames of each kind the server reads, between NIOHTTP2's handler and the multiplexer.
    final class FrameCounter: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame
        typealias InboundOut = HTTP2Frame
        let resets = Locked(0)
        let headers = Locked(0)

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let payload = unwrapInboundIn(data).payload
            switch payload {
            case .rstStream: resets.withLock { $0 += 1 }
            case .headers: headers.withLock { $0 += 1 }
            default: break
            }
            context.fireChannelRead(data)
        }
    }

    /// Counts the RST_STREAM frames in the bytes the server reads, before NIOHTTP2's handler: that handler drops a
    /// reset of a stream it has already closed (RFC 9113 §5.1 lets it), so a counter behind it never sees the resets
    /// a client sends for streams both sides had ended, which is what nginx counts against rapid resets.
    /// One per connection, adding to a count all connections share.
    final class RawResetCounter: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        let resets: Locked<Int>
        /// Bytes not yet parsed: the client preface, then frame headers and the payloads still to skip.
        private var pending = ByteBuffer()
        private var prefaceLeft = 24
        private var payloadLeft = 0

        init(counting resets: Locked<Int>) {
            self.resets = resets
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            pending.writeBuffer(&bytes)
            while true {
                if prefaceLeft > 0 {
                    let skipped = min(prefaceLeft, pending.readableBytes)
                    pending.moveReaderIndex(forwardBy: skipped)
                    prefaceLeft -= skipped
                    if prefaceLeft > 0 { break }
                }
                if payloadLeft > 0 {
                    let skipped = min(payloadLeft, pending.readableBytes)
                    pending.moveReaderIndex(forwardBy: skipped)
                    payloadLeft -= skipped
                    if payloadLeft > 0 { break }
                }
                // A frame header: a 24-bit length, the type, the flags and the stream.
                guard pending.readableBytes >= 9, let high = pending.readInteger(as: UInt8.self),
                    let low = pending.readInteger(as: UInt16.self), let type = pending.readInteger(as: UInt8.self)
                else { break }
                pending.moveReaderIndex(forwardBy: 5)
                payloadLeft = Int(high) << 16 | Int(low)
                if type == 0x3 { resets.withLock { $0 += 1 } }
            }
            pending.discardReadBytes()
            context.fireChannelRead(data)
        }
    }

    /// Answers every request `200` with a body of 1,024 bytes.
    final class Responder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            var head = HTTPResponseHead(version: .http2, status: .ok)
            head.headers.add(name: "content-length", value: "1024")
            // As nginx sends it: the head on its own, then the body with END_STREAM, so that the client reads them
            // apart.
            context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(1)) {
                let (responder, context) = bound.value
                let body = ByteBuffer(repeating: UInt8(ascii: "k"), count: 1024)
                context.write(responder.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                context.writeAndFlush(responder.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    @Test("A finished exchange's stream is not reset: no RST_STREAM for 20 answered requests", arguments: [1, 20])
    func finishedStreamsAreNotReset(concurrency: Int) async throws {
        let counter = FrameCounter()
        let rawResets = Locked(0)
        let chainPEM = Self.chain.fullChainPEM
        let keyPEM = Self.chain.leaf.privateKeyPEM
        let certificates = try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)).map {
            NIOSSLCertificateSource.certificate($0)
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates,
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: LoopbackServer.group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                    try sync.addHandler(RawResetCounter(counting: rawResets))
                    try sync.addHandler(NIOHTTP2Handler(mode: .server))
                    try sync.addHandler(counter)
                    try sync.addHandler(
                        HTTP2StreamMultiplexer(mode: .server, channel: channel) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                                try stream.pipeline.syncOperations.addHandler(Responder())
                            }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        defer { Task { try await channel.close() } }

        let transport = NIOTransport()
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy)
        let url = try #require(URL(string: "https://localhost:\(port)/x"))
        var answered = 0
        for _ in 0..<(20 / concurrency) {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<concurrency {
                    group.addTask {
                        let response = try await manager.send(
                            URLRequest(url: url), serializer: StringResponseSerializer())
                        #expect(response.httpVersion == "HTTP/2")
                        return response.value
                    }
                }
                for try await body in group where body.utf8.count == 1024 { answered += 1 }
            }
        }
        #expect(answered == 20)
        // Frames already sent are read before the connection goes.
        try await Task.sleep(for: .milliseconds(100))
        #expect(counter.headers.value == 20)
        #expect(counter.resets.value == 0, "the client reset streams it had finished")
        #expect(rawResets.value == 0, "the client reset streams both sides had ended")
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
    }
}
