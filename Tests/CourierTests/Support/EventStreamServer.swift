import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP server for server-sent-event tests: answers each request with what `answer` says for it (its index from
/// 0, and its `Last-Event-ID`), and records when each request arrived and the `Last-Event-ID` it carried.
final class EventStreamServer: Sendable {
    enum Reply: Sendable {
        /// `200 text/event-stream`, chunked, with `body`; then the connection is cut (no final chunk) when `drop`,
        /// else the response stays open until the server stops.
        case events(String, drop: Bool)
        /// A response with `status`, `contentType` and `body`, ended normally.
        case plain(status: Int, contentType: String, body: String)
    }

    struct Received: Sendable {
        var lastEventID: String?
        var accept: String?
        var at: ContinuousClock.Instant
    }

    let url: URL
    private let channel: any Channel
    private let record: Locked<[Received]>

    private init(channel: any Channel, url: URL, record: Locked<[Received]>) {
        self.channel = channel
        self.url = url
        self.record = record
    }

    static func start(answer: @escaping @Sendable (_ index: Int, _ lastEventID: String?) -> Reply) async throws
        -> EventStreamServer
    {
        let record = Locked<[Received]>([])
        let (channel, _, url) = try await LoopbackServer.bind(path: "events") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(EventStreamHandler(answer: answer, record: record))
        }
        return EventStreamServer(channel: channel, url: url, record: record)
    }

    /// The requests so far, in order.
    var received: [Received] { record.withLock { $0 } }

    func stop() async throws {
        try await channel.close()
    }
}

private final class EventStreamHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a handler on its channel's event loop only; `record` is a lock.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (Int, String?) -> EventStreamServer.Reply
    private let record: Locked<[EventStreamServer.Received]>
    private var head: HTTPRequestHead?

    init(
        answer: @escaping @Sendable (Int, String?) -> EventStreamServer.Reply,
        record: Locked<[EventStreamServer.Received]>
    ) {
        self.answer = answer
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            let lastEventID = head.headers.first(name: "Last-Event-ID")
            let index = record.withLock { record -> Int in
                record.append(.init(lastEventID: lastEventID, accept: head.headers.first(name: "Accept"), at: .now))
                return record.count - 1
            }
            respond(context, answer(index, lastEventID))
        }
    }

    private func respond(_ context: ChannelHandlerContext, _ reply: EventStreamServer.Reply) {
        switch reply {
        case .events(let body, let drop):
            let headers = HTTPHeaders([("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")])
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil)
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body))))
            ).assumeIsolated().whenComplete { _ in
                if drop { context.close(promise: nil) }
            }
        case .plain(let status, let contentType, let body):
            let headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", "\(body.utf8.count)")])
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers))),
                promise: nil)
            if !body.isEmpty {
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))),
                    promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
