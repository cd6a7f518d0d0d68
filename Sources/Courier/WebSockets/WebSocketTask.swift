import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A WebSocket connection made through a session (`URLSessionWebSocketTask`'s API, on Linux too): whole messages in
/// and out, pings, the close handshake.
///
/// ```swift
/// let socket = manager.webSocketTask(with: URLRequest(url: URL(string: "wss://example.org/chat")!))
/// try await socket.send(.string("hello"))
/// for try await message in socket.messages { print(message) }
/// ```
///
/// It is one of the session's tasks (a ``ConnectionTask``), as `URLSessionWebSocketTask` is a `URLSessionTask`. The
/// connection opens on ``resume()`` or the first call that needs it. The upgrade request goes through the session's
/// adapters (the tracing's, then the session's interceptor) and goes out as the session sends its requests
/// (``SessionManager/transportRequest(for:)``): its header fields and cookies, and over `wss` its security policy,
/// evaluated inside the TLS handshake before the upgrade request is written (a refused chain is -1202 and the
/// server sees nothing). When the upgrade fails, the session's retrier may have it tried again. Cookies the `101`
/// sets are stored. Event monitors see the task created, resumed, its `101`, and its completion when the connection
/// closes: with no error after a normal close (1000), with the ``WebSocketClosedError`` after any other, and with
/// -999 after ``SessionTask/cancel()`` (which closes the connection with 1001, going away). As with every task, the
/// session keeps it until it completes: release the manager, or cancel the task, to close a connection you no
/// longer want.
///
/// Messages larger than ``maximumMessageSize`` close the connection with 1009 and fail with
/// ``WebSocketClosedError``; a text message that is not UTF-8 closes it with 1007. After the close every call fails
/// with the ``WebSocketClosedError`` that has the close code and reason (``closeCode``, ``closeReason``).
///
/// The transport makes the connection: ``NIOTransport`` and ``URLSessionTransport`` both do (the latter with
/// Courier's NIO code, since URLSession cannot on Linux); on a transport of your own that does not, the first call
/// fails with ``CourierError/unsupportedURL(_:reason:context:)``.
///
/// Thread safety: the connection's state and the pinger are behind locks, the rest is immutable; hence
/// `@unchecked Sendable`, as for every ``SessionTask``.
public final class WebSocketTask: ConnectionTask, @unchecked Sendable {
    private enum Connection {
        case idle
        case opening(Task<any WebSocketConnection, any Error>)
        case open(any WebSocketConnection)
        case failed(any Error)
    }

    private let transport: any Transport
    private let configuration: WebSocketConfiguration
    private let pingInterval: Duration?
    private let link = Locked(Connection.idle)
    private let pinger = Locked<Task<Void, Never>?>(nil)

    init(request: URLRequest, manager: SessionManager, configuration: WebSocketConfiguration, pingInterval: Duration?) {
        transport = manager.transport
        self.configuration = configuration
        self.pingInterval = pingInterval
        super.init(request: request, manager: manager)
    }

    /// The largest message accepted, in bytes.
    public var maximumMessageSize: Int { configuration.maximumMessageSize }

    /// Starts connecting, if it has not yet.
    public override func resume() {
        opening()
    }

    /// Opens the connection now, if it is not open yet, and returns once it is.
    ///
    /// - Throws: ``CourierError`` when the connection cannot be made (or the task was cancelled first).
    public func connect() async throws {
        _ = try await connection()
    }

    /// Sends a message.
    ///
    /// - Throws: ``CourierError`` when the connection cannot be made; ``WebSocketClosedError`` once it has closed.
    public func send(_ message: WebSocketMessage) async throws {
        try await connection().send(message)
    }

    /// The next message.
    ///
    /// - Throws: ``CourierError`` when the connection cannot be made; ``WebSocketClosedError`` once it has closed
    ///   (also after a normal close: see ``messages`` for a sequence that ends there).
    public func receive() async throws -> WebSocketMessage {
        try await connection().receive()
    }

    /// Sends a ping and returns when the pong arrives.
    public func sendPing() async throws {
        try await connection().sendPing()
    }

    /// Closes the connection with `closeCode` and `reason` and waits for the close handshake (at most 5 s); the task
    /// then completes (see ``WebSocketTask``). A task that never connected is cancelled.
    public func cancel(with closeCode: WebSocketCloseCode, reason: String = "") async {
        pinger.withLock { $0?.cancel() }
        let current = link.withLock { current -> Connection in
            if case .idle = current {
                current = .failed(WebSocketClosedError(code: closeCode, reason: reason))
            }
            return current
        }
        switch current {
        case .opening(let task): await (try? await task.value)?.close(code: closeCode, reason: reason)
        case .open(let connection): await connection.close(code: closeCode, reason: reason)
        case .idle: cancel()
        case .failed: break
        }
    }

    /// The subprotocol the server chose, once connected.
    public var negotiatedProtocol: String? { opened?.negotiatedProtocol }
    /// The close code, once the connection has closed.
    public var closeCode: WebSocketCloseCode? { opened?.closeCode }
    /// The close reason, once the connection has closed.
    public var closeReason: String? { opened?.closeReason }

    /// The messages as they arrive; the sequence ends after a normal close (1000) and throws the
    /// ``WebSocketClosedError`` of any other.
    public var messages: WebSocketMessages { WebSocketMessages(task: self) }

    /// The connection, if it has opened.
    private var opened: (any WebSocketConnection)? {
        guard case .open(let connection) = link.withLock({ $0 }) else { return nil }
        return connection
    }

    /// Starts opening the connection unless it has; the state as it then is.
    @discardableResult
    private func opening() -> Connection {
        link.withLock { current -> Connection in
            if case .idle = current {
                // Strong on purpose: the task ends once the connection is open or has failed.
                current = .opening(Task { try await self.openConnection() })
            }
            return current
        }
    }

    private func connection() async throws -> any WebSocketConnection {
        switch opening() {
        case .open(let connection): return connection
        case .opening(let task): return try await task.value
        case .failed(let error): throw error
        case .idle: throw CourierError.cancelled(context: CourierError.Context(request: originalRequest))
        }
    }

    private func openConnection() async throws -> any WebSocketConnection {
        do {
            let connection = try await open(
                { [transport, configuration] request in
                    let connection = try await transport.openWebSocket(request, configuration: configuration)
                    return OpenedConnection(
                        connection: connection, response: connection.upgradeResponse, metrics: connection.metrics)
                },
                onCancel: { connection in Task { await connection.close(code: .goingAway, reason: "") } })
            link.withLock { $0 = .open(connection) }
            if let pingInterval { startPinging(connection, every: pingInterval) }
            Task {
                await connection.waitUntilClosed()
                self.pinger.withLock { $0?.cancel() }
                let code = connection.closeCode ?? .abnormalClosure
                self.finish(
                    error: code == .normalClosure
                        ? nil : WebSocketClosedError(code: code, reason: connection.closeReason ?? ""))
            }
            return connection
        } catch {
            link.withLock { $0 = .failed(error) }
            throw error
        }
    }

    private func startPinging(_ connection: any WebSocketConnection, every interval: Duration) {
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled || connection.closeCode != nil { return }
                try? await connection.sendPing()
            }
        }
        pinger.withLock { $0 = task }
    }
}
