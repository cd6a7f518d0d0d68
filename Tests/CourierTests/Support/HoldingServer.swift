import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP/1.1 server that holds every request it receives until the test lets it go, and records what arrived:
/// how many requests were held at once, the most ever, and each request's path in order of arrival. Answers
/// `200` with the path as the body, keeping the connection open.
final class HoldingServer: Sendable {
    struct Record {
        var arrived: [String] = []
        var held: [Held] = []
        var mostHeldAtOnce = 0
        var holding = true
    }

    /// A request waiting for its answer.
    struct Held {
        let path: String
        let answer: @Sendable () -> Void
    }

    let baseURL: URL
    private let channel: any Channel
    private let record: Locked<Record>

    private init(channel: any Channel, baseURL: URL, record: Locked<Record>) {
        self.channel = channel
        self.baseURL = baseURL
        self.record = record
    }

    static func start() async throws -> HoldingServer {
        let record = Locked(Record())
        let (channel, _, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(HoldingHandler(record: record))
        }
        return HoldingServer(channel: channel, baseURL: url, record: record)
    }

    /// The paths of the requests that arrived, in order.
    var arrived: [String] { record.withLock { $0.arrived } }
    /// How many requests are held now.
    var heldNow: Int { record.withLock { $0.held.count } }
    /// The most requests held at once so far.
    var mostHeldAtOnce: Int { record.withLock { $0.mostHeldAtOnce } }

    /// Answers every request held now, and from now on answers each at once.
    func releaseAll() {
        let held = record.withLock { record -> [Held] in
            record.holding = false
            defer { record.held = [] }
            return record.held
        }
        for request in held { request.answer() }
    }

    /// Answers the oldest request held, if any.
    func releaseOne() {
        let first = record.withLock { record -> Held? in
            record.held.isEmpty ? nil : record.held.removeFirst()
        }
        first?.answer()
    }

    /// Waits until `count` requests are held (polling every 10 ms, up to `seconds`); whether they are.
    func waitUntilHeld(_ count: Int, seconds: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if heldNow >= count { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return heldNow >= count
    }

    func stop() async {
        releaseAll()
        try? await channel.close()
    }
}

private final class HoldingHandler: ChannelInboundHandler, @unchecked Sendable {  // used on its channel's loop only
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let record: Locked<HoldingServer.Record>
    private var path = ""

    init(record: Locked<HoldingServer.Record>) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
        case .body:
            break
        case .end:
            let path = path
            let loop = context.eventLoop
            let bound = NIOLoopBound(context, eventLoop: loop)
            let answer: @Sendable () -> Void = {
                loop.execute {
                    let context = bound.value
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Length", value: "\(path.utf8.count)")
                    headers.add(name: "Content-Type", value: "text/plain")
                    context.write(
                        NIOAny(HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: headers))),
                        promise: nil)
                    context.write(
                        NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: path)))), promise: nil)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                }
            }
            let holds = record.withLock { record -> Bool in
                record.arrived.append(path)
                guard record.holding else { return false }
                record.held.append(HoldingServer.Held(path: path, answer: answer))
                record.mostHeldAtOnce = max(record.mostHeldAtOnce, record.held.count)
                return true
            }
            if !holds { answer() }
        }
    }
}
