import Foundation
import NIOCore
import NIOPosix

/// Binds the test target's NIO servers (``FaultServer``, ``RangeServer``, ``RedirectServer``) to a free port of
/// 127.0.0.1 on NIO's shared event-loop group.
enum LoopbackServer {
    /// A listening channel whose accepted connections get the handlers `configure` adds, its port, and the URL of
    /// `path` on it (`http://127.0.0.1:<port>/<path>`).
    static func bind(
        path: String, _ configure: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> (channel: any Channel, port: Int, url: URL) {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
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
