import Foundation

/// An open WebSocket connection, as a transport makes it (``Transport/openWebSocket(_:configuration:)``): whole
/// messages in and out, pings answered, the close handshake done.
///
/// Invariants: messages arrive whole and in order (fragments reassembled); a text message is valid UTF-8 (otherwise
/// the connection closes with 1007); no message is larger than ``WebSocketConfiguration/maximumMessageSize``
/// (otherwise it closes with 1009); a ping from the server is answered with a pong at once (one pong may answer
/// several pings, for the latest, as RFC 6455 §5.5.3 allows). After the close, every call fails with
/// ``WebSocketClosedError``.
public protocol WebSocketConnection: Sendable {
    /// The subprotocol the server chose (`Sec-WebSocket-Protocol`), if any.
    var negotiatedProtocol: String? { get }
    /// The server's `101 Switching Protocols` head.
    var upgradeResponse: ResponseHead { get }

    /// Sends a message.
    ///
    /// - Throws: ``WebSocketClosedError`` once the connection has closed.
    func send(_ message: WebSocketMessage) async throws

    /// The next message.
    ///
    /// - Throws: ``WebSocketClosedError`` when the connection has closed (the close code and reason the server
    ///   sent, or 1006 when it ended without a close frame).
    func receive() async throws -> WebSocketMessage

    /// Sends a ping and returns when its pong has arrived.
    ///
    /// - Throws: ``WebSocketClosedError`` when the connection closes first.
    func sendPing() async throws

    /// Starts the close handshake with `code` and `reason` (truncated to fit a control frame) and returns when the
    /// connection has closed (the server's close frame, or 5 s).
    func close(code: WebSocketCloseCode, reason: String) async

    /// Returns once the connection has closed (either side's close, or the connection lost).
    func waitUntilClosed() async

    /// The upgrade exchange's dates and connection facts, if the transport measured them.
    var metrics: TransactionMetrics? { get }

    /// The close code, once the connection has closed.
    var closeCode: WebSocketCloseCode? { get }
    /// The close reason, once the connection has closed.
    var closeReason: String? { get }
}

/// How a WebSocket connection is made and what it accepts.
public struct WebSocketConfiguration: Sendable {
    /// The subprotocols offered (`Sec-WebSocket-Protocol`).
    public var protocols: [String] = []
    /// The largest message accepted, in bytes; a larger one closes the connection with 1009. Default 1 MiB.
    public var maximumMessageSize: Int = 1 << 20
    /// How long connecting and the upgrade may take; default 10 s.
    public var connectTimeout: Duration = .seconds(10)

    /// The default configuration.
    public init() {}
}

extension WebSocketConnection {
    /// Nothing measured.
    public var metrics: TransactionMetrics? { nil }
}

extension Transport {
    /// Opens a WebSocket connection for `request` (an `http`/`https` URL: the upgrade request's), applying its
    /// ``TransportRequest/securityPolicy`` before the upgrade request is written. The default fails: a transport
    /// that cannot make WebSocket connections says so.
    ///
    /// - Throws: ``CourierError/unsupportedURL(_:reason:context:)``.
    public func openWebSocket(
        _ request: TransportRequest, configuration: WebSocketConfiguration
    ) async throws -> any WebSocketConnection {
        throw CourierError.unsupportedURL(
            request.url, reason: "\(type(of: self)) does not make WebSocket connections; use NIOTransport",
            context: CourierError.Context())
    }
}
