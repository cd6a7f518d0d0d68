import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP server that answers its requests from a script, in order (the last answer again once the script is
/// used up), and records each request whole: method, path, the SHA-256 of its body, and when it arrived. For the
/// retry tests: "503, 503, then 200", and whether a retried body arrived the same each time.
final class ScriptedServer: Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body = "body of the answer"
        /// Seconds the answer waits before it is written (on the event loop's timer: nothing blocks).
        var delay = 0.0
        /// Close the connection instead of answering, once the whole request is read: what a server's keep-alive
        /// timeout does to a connection the client has just sent its next request on.
        var dropsConnection = false
    }

    struct Received: Sendable {
        var method: String
        var path: String
        var bodySHA256: String
        var bodyCount: Int
        var at: ContinuousClock.Instant
        /// The header fields, names lower-cased (the last of repeated ones).
        var headers: [String: String] = [:]
    }

    let baseURL: URL
    private let channel: any Channel
    private let record: Locked<[Received]>

    private init(channel: any Channel, baseURL: URL, record: Locked<[Received]>) {
        self.channel = channel
        self.baseURL = baseURL
        self.record = record
    }

    static func start(_ script: [Reply]) async throws -> ScriptedServer {
        try await start { index, _ in script[min(index, script.count - 1)] }
    }

    /// A server that answers request number `index` (from 0) with what `answer` makes of it.
    static func start(answer: @escaping @Sendable (_ index: Int, Received) -> Reply) async throws -> ScriptedServer {
        let record = Locked<[Received]>([])
        let (channel, _, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(ScriptedHandler(answer: answer, record: record))
        }
        return ScriptedServer(channel: channel, baseURL: url, record: record)
    }

    /// The URL of `path` on this server.
    func url(_ path: String) -> URL { baseURL.appendingPathComponent(path) }

    /// The requests so far, in the order they arrived.
    var received: [Received] { record.withLock { $0 } }

    /// The time between consecutive requests, in seconds.
    var gaps: [Double] {
        let times = received.map(\.at)
        return zip(times, times.dropFirst()).map { earlier, later in
            let gap = later - earlier
            return Double(gap.components.seconds) + Double(gap.components.attoseconds) * 1e-18
        }
    }

    func stop() async throws {
        try await channel.close()
    }
}

private final class ScriptedHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only; `record` is a lock.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (Int, ScriptedServer.Received) -> ScriptedServer.Reply
    private let record: Locked<[ScriptedServer.Received]>
    private var head: HTTPRequestHead?
    private var body = SHA256()
    private var count = 0

    init(
        answer: @escaping @Sendable (Int, ScriptedServer.Received) -> ScriptedServer.Reply,
        record: Locked<[ScriptedServer.Received]>
    ) {
        self.answer = answer
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = SHA256()
            count = 0
        case .body(let buffer):
            buffer.withUnsafeReadableBytes { body.update(bufferPointer: $0) }
            count += buffer.readableBytes
        case .end:
            guard let head else { return }
            let digest = body.finalize().map { String(format: "%02x", $0) }.joined()
            let received = ScriptedServer.Received(
                method: head.method.rawValue, path: String(head.uri.prefix { $0 != "?" }), bodySHA256: digest,
                bodyCount: count, at: .now,
                headers: Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }) { $1 })
            let index = record.withLock { record -> Int in
                record.append(received)
                return record.count - 1
            }
            let reply = answer(index, received)
            if reply.dropsConnection {
                context.close(promise: nil)
                return
            }
            var headers = NIOHTTP1.HTTPHeaders(reply.headers)
            headers.add(name: "Content-Length", value: String(reply.body.utf8.count))
            let responseHead = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: reply.status), headers: headers)
            let channel = context.channel
            let write: @Sendable () -> Void = {
                channel.write(HTTPServerResponsePart.head(responseHead), promise: nil)
                channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: reply.body))), promise: nil)
                channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
            }
            if reply.delay > 0 {
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(reply.delay * 1000))) { write() }
            } else {
                write()
            }
        }
    }
}
