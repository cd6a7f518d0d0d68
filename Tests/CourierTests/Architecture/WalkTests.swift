import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Courier

/// The GET the Architecture article walks through, `client.get("users/1", as: User.self)`, on a plain
/// `HTTPSessionManager` over `NIOTransport`, answered `200` with a small JSON body.
///
/// `Scripts/walk.sh` runs it with code coverage twice, once with one GET and once with two
/// (`COURIER_WALK_GETS`), and lists the files whose lines ran more often the second time: the files one GET on a
/// warm connection crosses.
struct WalkTests {
    struct User: Decodable, Equatable {
        var id: Int
        var name: String
    }

    @Test func theArticlesGetDecodesItsUser() async throws {
        let (channel, _, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.configureHTTPServerPipeline()
            try pipeline.addHandler(UserHandler())
        }
        let transport = NIOTransport()
        let client = HTTPSessionManager(baseURL: url, configuration: .ephemeral, transport: transport)
        let gets = ProcessInfo.processInfo.environment["COURIER_WALK_GETS"].flatMap(Int.init) ?? 1
        for _ in 0..<gets {
            let user = try await client.get("users/1", as: User.self)
            #expect(user.value == User(id: 1, name: "Ada"))
        }
        await client.invalidateAndWait(cancelingTasks: true)
        await transport.shutdown()
        try await channel.close()
    }
}

/// Answers every request with one user, keeping the connection open.
private final class UserHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let body = ByteBuffer(string: #"{"id":1,"name":"Ada"}"#)
        let headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "\(body.readableBytes)")])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
