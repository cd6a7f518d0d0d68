import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The seam for features that open connections of their own (WebSockets): a session task for the connection, a
/// request as the session would send it, and the response's cookies stored as the session would store them.
extension SessionManager {
    /// A task for a connection of the caller's own, registered with the session and not yet resumed; see
    /// ``ConnectionTask``.
    public func connectionTask(with request: URLRequest) -> ConnectionTask {
        adopt(ConnectionTask(request: request, manager: self))
    }

    /// Registers a connection task (or a subclass of one: ``WebSocketTask``) with the session.
    func adopt<Task: ConnectionTask>(_ task: Task) -> Task {
        let delegate = TaskDelegate(for: task, serializer: responseSerializer, hopsToCompletionQueue: false)
        core.register(task, delegate: delegate)
        return task
    }

    /// `request` as the session sends it: its header fields, the configuration's additional fields it lacks, the
    /// cookies stored for its URL, and the security policy for its URL (with the session's trust hook).
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` for a request without a URL.
    public func transportRequest(for request: URLRequest) throws -> TransportRequest {
        try core.connectionRequest(for: request)
    }

    /// Stores the cookies a response to `request` set, as the session stores those of its own tasks.
    public func storeCookies(from response: ResponseHead, for request: URLRequest) {
        guard let url = request.url else { return }
        core.storeCookies(
            from: response.headers, handlesCookies: request.httpShouldHandleCookies, url: SessionCore.httpURL(url))
    }
}
