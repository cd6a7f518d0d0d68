import Foundation
import NIOCore
import NIOPosix

@testable import Courier

/// A loopback server for CLI tests that keeps the head of every request it reads (request line and headers, as
/// text) and answers each one with the same canned bytes, then closes the connection.
///
/// For the tests that must see what `courier` sent: `Accept-Encoding` on downloads, user info turned into
/// `Authorization`, and `Authorization` not reaching another origin after a redirect.
final class HeadRecordingServer: Sendable {
    /// The port the server listens on, on 127.0.0.1.
    let port: Int
    /// `http://127.0.0.1:<port>/`.
    let baseURL: URL
    private let channel: any Channel
    private let heads: Locked<[String]>

    private init(channel: any Channel, port: Int, baseURL: URL, heads: Locked<[String]>) {
        self.channel = channel
        self.port = port
        self.baseURL = baseURL
        self.heads = heads
    }

    /// Starts a server answering every request with `response` (a whole HTTP response, head and body).
    static func start(responding response: Data) async throws -> HeadRecordingServer {
        let heads = Locked([String]())
        let (channel, port, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.addHandler(HeadRecordingHandler(response: Array(response), heads: heads))
        }
        return HeadRecordingServer(channel: channel, port: port, baseURL: url, heads: heads)
    }

    /// The heads read so far, in order.
    var requests: [String] { heads.withLock { $0 } }

    /// The value of header `name` in request `index` (names compared without case), if it was sent.
    func header(_ name: String, inRequest index: Int = 0) -> String? {
        let all = requests
        guard index < all.count else { return nil }
        for line in all[index].components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Stops listening.
    func stop() async throws {
        try await channel.close()
    }
}

/// Reads request heads and answers each with the canned bytes. Runs on its channel's event loop only.
private final class HeadRecordingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: [UInt8]
    private let heads: Locked<[String]>
    private var pending: [UInt8] = []

    init(response: [UInt8], heads: Locked<[String]>) {
        self.response = response
        self.heads = heads
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard pending.count >= 4,
            let start = (0...(pending.count - 4)).first(where: { pending[$0..<$0 + 4].elementsEqual(terminator) })
        else { return }
        let head = String(decoding: pending[..<start], as: UTF8.self)
        pending.removeAll()
        heads.withLock { $0.append(head) }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: response)))
            .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
