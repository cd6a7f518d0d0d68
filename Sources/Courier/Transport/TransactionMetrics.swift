import Foundation

/// One request and its response, timed the way `URLSessionTaskTransactionMetrics` times them.
///
/// A transport fills in what it sees by the time it hands the response head over (``TransportResponse/metrics``);
/// the session adds the rest: the end of a body it reads itself and the bytes it read. A date the transport cannot
/// see stays `nil`. With ``NIOTransport``:
/// - ``domainLookupStartDate`` and ``domainLookupEndDate`` are always `nil`: NIO resolves and connects in one step.
/// - On Courier's own connections (collected exchanges without a proxy, HTTP/1.1 or HTTP/2), a new connection has
///   ``connectStartDate`` and ``connectEndDate`` and, over TLS, ``secureConnectionStartDate`` (TCP connected, the
///   handshake begun) and ``secureConnectionEndDate``; ``requestEndDate`` is when the request was handed to the
///   socket.
/// - On AsyncHTTPClient's connections (streamed bodies, proxies), a new connection has only ``connectEndDate`` (and,
///   over TLS, ``secureConnectionEndDate``): the moment it was ready, after its TLS handshake. A streamed exchange
///   (``Transport/send(_:)``) has no ``requestEndDate``.
///
/// ``URLSessionTransport`` sees no connection: on Linux, Foundation never delivers `URLSessionTaskMetrics`. Its
/// transactions have the fetch, request-start and response dates only, ``networkProtocolName`` and
/// ``negotiatedTLSProtocolVersion`` are `nil` and ``isReusedConnection`` is `false`.
///
/// A reused connection has no connect or secure-connection dates, as in `URLSessionTaskTransactionMetrics`.
public struct TransactionMetrics: Sendable, Hashable {
    /// Where the response came from.
    public enum ResourceFetchType: Sendable, Hashable {
        /// The network.
        case networkLoad
        /// The session's URL cache, without asking the server.
        case localCache
    }

    /// The request's method.
    public var method: String
    /// The request's URL.
    public var url: URL
    /// The response's status code; `nil` when no response arrived.
    public var statusCode: Int?
    /// Where the response came from.
    public var resourceFetchType: ResourceFetchType = .networkLoad
    /// When the transport was asked for the response.
    public var fetchStartDate: Date?
    /// When the name lookup began.
    public var domainLookupStartDate: Date?
    /// When the name lookup ended.
    public var domainLookupEndDate: Date?
    /// When connecting began (a new connection only).
    public var connectStartDate: Date?
    /// When the TLS handshake began (a new `https` connection only).
    public var secureConnectionStartDate: Date?
    /// When the TLS handshake ended (a new `https` connection only).
    public var secureConnectionEndDate: Date?
    /// When the connection was ready for the request (a new connection only).
    public var connectEndDate: Date?
    /// When the request began to be written.
    public var requestStartDate: Date?
    /// When the request's last byte was written.
    public var requestEndDate: Date?
    /// When the response's head arrived.
    public var responseStartDate: Date?
    /// When the response's last byte arrived.
    public var responseEndDate: Date?
    /// The protocol the exchange used, as ALPN names it: `http/1.1`, `http/1.0` or `h2`.
    public var networkProtocolName: String?
    /// Whether the request went out on a connection an earlier exchange had used.
    public var isReusedConnection = false
    /// The TLS version of an `https` connection, e.g. `TLSv1.3`.
    public var negotiatedTLSProtocolVersion: String?
    /// The IP address the connection went to (`URLSessionTaskTransactionMetrics.remoteAddress`), when the transport
    /// knows it (``NIOTransport``'s connections; not through a proxy, whose address it would be).
    public var remoteAddress: String?
    /// Request-body bytes sent.
    public var countOfRequestBodyBytesSent: Int64 = 0
    /// Response-body bytes received, after decompression.
    public var countOfResponseBodyBytesReceived: Int64 = 0

    /// Metrics for an exchange of `method` and `url` with nothing measured yet.
    public init(method: String, url: URL) {
        self.method = method
        self.url = url
    }
}
