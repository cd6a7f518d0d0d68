import Foundation
import NIOCore
import NIOPosix

/// Binds the test target's NIO servers (``FaultServer``, ``RangeServer``, ``RedirectServer``) to a free port of
/// 127.0.0.1 on the servers' own event-loop group.
enum LoopbackServer {
    /// The group every test server runs on, apart from NIO's shared one that Courier's clients use by default: a
    /// server busy with a big WebSocket frame or a stream of writes (in a debug build) then delays only the other
    /// servers, never the clients of the tests running beside it.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// A listening channel whose accepted connections get the handlers `configure` adds, its port, and the URL of
    /// `path` on it (`http://127.0.0.1:<port>/<path>`).
    static func bind(
        path: String, _ configure: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> (channel: any Channel, port: Int, url: URL) {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try configure(channel.pipeline.syncOperations) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(port)/\(path)") else {
            try? await channel.close()
            throw FaultServerError.noPort
        }
        return (channel, port, url)
    }
}
