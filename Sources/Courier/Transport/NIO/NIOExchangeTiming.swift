import Foundation

/// What ``NIOTransport``'s connections measure of one exchange, made into ``TransactionMetrics`` once the exchange
/// is over.
struct NIOExchangeTiming: Sendable {
    /// What the connection said of itself; `nil` when it said nothing.
    var connection: NIOConnectionFacts?
    var requestStart: Date?
    var requestEnd: Date?
    var responseStart: Date?
    var responseEnd: Date?

    /// The metrics of an exchange of `method` and `url` that the transport was asked for at `fetchStart`.
    func metrics(method: String, url: URL, fetchStart: Date, statusCode: Int?) -> TransactionMetrics {
        var metrics = TransactionMetrics(method: method, url: url)
        metrics.statusCode = statusCode
        metrics.fetchStartDate = fetchStart
        metrics.requestStartDate = requestStart
        metrics.requestEndDate = requestEnd
        metrics.responseStartDate = responseStart
        metrics.responseEndDate = responseEnd
        if let connection {
            metrics.isReusedConnection = connection.isReused
            metrics.networkProtocolName = connection.protocolName
            metrics.negotiatedTLSProtocolVersion = connection.tlsVersion
            metrics.remoteAddress = connection.remoteAddress
            // A reused connection has no connect dates, as in URLSession's metrics.
            if !connection.isReused {
                metrics.connectStartDate = connection.connectStart
                metrics.connectEndDate = connection.ready
                if connection.tlsVersion != nil {
                    metrics.secureConnectionStartDate = connection.secureConnectionStart
                    metrics.secureConnectionEndDate = connection.ready
                }
            }
        }
        return metrics
    }
}

/// What a connection tells of itself to one of its exchanges.
struct NIOConnectionFacts: Sendable, Equatable {
    /// Whether an earlier exchange used the connection.
    var isReused: Bool
    /// When connecting began, where the transport saw it (its own connections).
    var connectStart: Date?
    /// When TCP was connected and the TLS handshake began (its own connections, over TLS).
    var secureConnectionStart: Date? = nil
    /// When the connection was ready for its first request (TCP connected and, over TLS, the handshake done).
    var ready: Date
    /// E.g. `TLSv1.3`; `nil` without TLS.
    var tlsVersion: String?
    /// `http/1.1`, `http/1.0` or `h2`.
    var protocolName: String
    /// The peer's IP address.
    var remoteAddress: String? = nil
}
