import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension SessionManager {
    /// A WebSocket task for `request` (`ws`, `wss`, `http` or `https`), offering `protocols`; see ``WebSocketTask``.
    ///
    /// - Parameters:
    ///   - request: the upgrade request: its URL, header fields and timeout.
    ///   - protocols: the subprotocols offered, in order of preference.
    ///   - maximumMessageSize: the largest message accepted (default 1 MiB); a larger one closes with 1009.
    ///   - pingInterval: when set, a ping is sent this often while the connection is open.
    public func webSocketTask(
        with request: URLRequest, protocols: [String] = [], maximumMessageSize: Int = 1 << 20,
        pingInterval: Duration? = nil
    ) -> WebSocketTask {
        var configuration = WebSocketConfiguration()
        configuration.protocols = protocols
        configuration.maximumMessageSize = maximumMessageSize
        return adopt(
            WebSocketTask(request: request, manager: self, configuration: configuration, pingInterval: pingInterval))
    }
}
