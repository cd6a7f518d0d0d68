import Foundation

/// What ``ConnectionTask/open(_:onCancel:)``'s opener made: the connection, the response that opened it, and that
/// exchange's metrics when the transport measured them.
public struct OpenedConnection<Connection: Sendable>: Sendable {
    /// The connection.
    public var connection: Connection
    /// The response that opened it (a WebSocket's `101 Switching Protocols`).
    public var response: ResponseHead
    /// The opening exchange's dates and connection facts; `nil` when the transport measured none (the session then
    /// records the dates it saw).
    public var metrics: TransactionMetrics?

    /// What an opener made.
    public init(connection: Connection, response: ResponseHead, metrics: TransactionMetrics? = nil) {
        self.connection = connection
        self.response = response
        self.metrics = metrics
    }
}
