import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Courier

/// An HTTP server that answers every request with one redirect, after reading the request's whole body.
///
/// httpbin's `redirect-to` answers before it reads a large body, and gunicorn then closes the socket with unread
/// bytes, so the kernel may send a reset that discards the redirect before the client reads it. Reading the body
/// first makes a redirect of a large upload deterministic. Every request's method and body size are recorded.
final class RedirectServer: Sendable {
    /// What the server saw of one request.
    struct RequestRecord: Sendable {
        var method: String
        var bodyBytes: Int
    }

    /// `http://127.0.0.1:<port>/redirect`.
    let url: URL
    private let channel: any Channel
    private let log: Locked<[RequestRecord]>

    private init(channel: any Channel, url: URL, log: Locked<[RequestRecord]>) {
        self.channel = channel
        self.url = url
        self.log = log
    }

    /// Starts a server on a free port of 127.0.0.1 that answers `status` with `Location: location`.
    static func start(status: Int, location: URL) async throws -> RedirectServer {
        let log = Locked([RequestRecord]())
        let (channel, _, url) = try await LoopbackServer.bind(path: "redirect") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(
                RedirectHandler(status: HTTPResponseStatus(statusCode: status), location: location, log: log))
        }
        return RedirectServer(channel: channel, url: url, log: log)
    }

    /// What the server saw of each request so far.
    var requests: [RequestRecord] { log.withLock { $0 } }

    /// Stops listening.
    func stop() async throws {
        try await channel.close()
    }
}

/// Drains a request, then answers with the redirect. Runs on its channel's event loop only.
private final class RedirectHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let status: HTTPResponseStatus
    private let location: URL
    private let log: Locked<[RedirectServer.RequestRecord]>
    private var current: RedirectServer.RequestRecord?

    init(status: HTTPResponseStatus, location: URL, log: Locked<[RedirectServer.RequestRecord]>) {
        self.status = status
        self.location = location
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            current = RedirectServer.RequestRecord(method: head.method.rawValue, bodyBytes: 0)
        case .body(let buffer):
            current?.bodyBytes += buffer.readableBytes
        case .end:
            if let current { log.withLock { $0.append(current) } }
            current = nil
            let headers = HTTPHeaders([("Location", location.absoluteString), ("Content-Length", "0")])
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
