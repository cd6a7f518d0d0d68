import NIOCore
import NIOPosix

/// Binds the test target's NIO servers (``FaultServer``, ``RangeServer``, ``RedirectServer``) to a free port of
/// 127.0.0.1 on NIO's shared event-loop group.
enum LoopbackServer {
    /// A listening channel whose accepted connections get the handlers `configure` adds, and its port.
    static func bind(
        _ configure: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> (channel: any Channel, port: Int) {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try configure(channel.pipeline.syncOperations) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw FaultServerError.noPort
        }
        return (channel, port)
    }
}
