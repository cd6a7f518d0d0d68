import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A session task for a connection that a feature opens itself, such as a WebSocket: the seam that puts such a
/// connection among the session's tasks (as `URLSessionWebSocketTask` is a `URLSessionTask`, and Alamofire's
/// `WebSocketRequest` a `Request`).
///
/// The session runs the opening request as it runs its own: the adapters change it (the tracing's, then the
/// session's interceptor), it gets the session's header fields, cookies and security policy
/// (``SessionManager/transportRequest(for:)``), and when opening fails the retrier decides whether to try again.
/// Event monitors, ``SessionManager/events()`` and the did-complete notification see the task as they see any
/// other: created, resumed, its response (the `101`), each retry, and its completion with ``TaskMetrics``.
///
/// Its life: ``open(_:onCancel:)`` once, which resumes it; the connection is then the feature's, and the task keeps
/// running until the feature calls ``finish(error:)`` when the connection has closed. ``SessionTask/cancel()``
/// stops an opening in progress, or hands an open connection to the `onCancel` the feature gave, which closes it
/// (and then calls ``finish(error:)``); the task completes with -999 either way. It has no request timeout: the
/// opening's is the feature's to set, and an open connection may be quiet for as long as it likes.
///
/// Thread safety: the state is the ``SessionTask``'s, behind its lock, plus one locked flag; hence
/// `@unchecked Sendable`.
public class ConnectionTask: SessionTask, @unchecked Sendable {
    private let opened = Locked(false)

    init(request: URLRequest, manager: SessionManager) {
        super.init(source: .made(request), controller: manager.core)
    }

    /// Its feature opens the connection (``open(_:onCancel:)``); resuming it sends nothing.
    override var runsWhenResumed: Bool { false }

    /// Opens the connection, calling `open` with the request as the session sends it (adapted, with its fields,
    /// cookies and security policy), and returns what it made; records its response (cookies stored, monitors
    /// told) and its transaction. When `open` fails, the session's retrier may have it called again, with the
    /// request adapted again.
    ///
    /// - Parameters:
    ///   - open: makes the connection; its error is the task's, unless the retrier has it tried again.
    ///   - onCancel: closes the connection when ``SessionTask/cancel()`` is called after it opened.
    /// - Throws: the ``CourierError`` the task completes with when no connection was made (-999 when it was
    ///   cancelled, or when `open` had already been called); the task has then completed.
    public func open<Connection: Sendable>(
        _ open: @escaping @Sendable (TransportRequest) async throws -> OpenedConnection<Connection>,
        onCancel: @escaping @Sendable (Connection) -> Void
    ) async throws -> Connection {
        let first = opened.withLock { opened -> Bool in
            defer { opened = true }
            return !opened
        }
        guard first, let core = controller as? SessionCore, let delegate = core.delegate(for: self) else {
            throw CourierError.cancelled(context: CourierError.Context(request: originalRequest))
        }
        return try await core.open(self, delegate: delegate, with: open, onCancel: onCancel)
    }

    /// Completes the task once its connection has closed: with `error` (`nil` for a normal close), or -999 when it
    /// was cancelled. Does nothing once the task has completed.
    public func finish(error: (any Error)?) {
        guard let core = controller as? SessionCore, let delegate = core.delegate(for: self) else { return }
        core.finishConnection(self, delegate: delegate, error: error)
    }
}
