import AsyncHTTPClient
import Foundation

extension URLSessionTransport {
    /// Opens a WebSocket connection with Courier's own NIO connection code, on NIO's shared event loops: URLSession
    /// has no WebSocket task on Linux, and one that works the same on every platform keeps a session's WebSockets
    /// the same whatever its transport. The request's ``TransportRequest/securityPolicy`` is evaluated inside the TLS
    /// handshake, and its ``TransportRequest/proxy`` is tunnelled through, as ``NIOTransport`` does.
    ///
    /// The connection does not belong to the URLSession: ``shutdown()`` does not close it; its ``WebSocketTask``
    /// does.
    ///
    /// - Throws: ``CourierError`` as ``NIOTransport``'s `openWebSocket` does.
    public func openWebSocket(
        _ request: TransportRequest, configuration: WebSocketConfiguration
    ) async throws -> any WebSocketConnection {
        if isShutDown.value {
            throw CourierError.requestFailed(underlyingError: TransportShutDownError(), context: CourierError.Context())
        }
        return try await NIOWebSocketConnector(
            request: request, configuration: configuration, group: HTTPClient.defaultEventLoopGroup
        ).connect()
    }
}
