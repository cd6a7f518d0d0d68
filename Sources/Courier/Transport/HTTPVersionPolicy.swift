/// Which HTTP versions a request may use (``SessionConfiguration/httpVersion``, ``TransportRequest/httpVersion``).
public enum HTTPVersionPolicy: Sendable, Hashable {
    /// HTTP/2 when the server offers it in the TLS handshake (ALPN), else HTTP/1.1; plain `http` is always HTTP/1.1
    /// (no h2c). The default.
    case automatic
    /// HTTP/1.1 only, also over TLS.
    case http1Only
}
