import Courier
import Foundation

/// A WebSocket peer that follows a script, which ``StubTransport`` opens instead of a connection
/// (``StubTransport/stubWebSocket(_:script:)``): it sends its greeting, answers each message the client sends, and
/// closes when the script says or when the client does.
public final class StubWebSocket: WebSocketConnection {
    /// What the peer does.
    public struct Script: Sendable {
        /// Messages the peer sends as soon as the connection opens.
        public var greeting: [WebSocketMessage]
        /// The peer's answer to each message the client sends (none, one or several).
        public var reply: @Sendable (WebSocketMessage) -> [WebSocketMessage]
        /// After answering this many messages, the peer closes with ``WebSocketCloseCode/normalClosure``; `nil`:
        /// never.
        public var closesAfter: Int?

        /// A script of `greeting`, `reply` and, when given, a close after `closesAfter` messages.
        public init(
            greeting: [WebSocketMessage] = [], closesAfter: Int? = nil,
            reply: @escaping @Sendable (WebSocketMessage) -> [WebSocketMessage] = { _ in [] }
        ) {
            self.greeting = greeting
            self.reply = reply
            self.closesAfter = closesAfter
        }

        /// Sends every message back as it came.
        public static let echo = Script { [$0] }
    }

    private struct State: Sendable {
        var inbox: [WebSocketMessage] = []
        var waiters: [CheckedContinuation<WebSocketMessage, any Error>] = []
        var closed: WebSocketClosedError?
        var answered = 0
        var closedWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let script: Script
    private let maximumMessageSize: Int
    private let state = Guarded(State())
    /// Every message the client sent, in order.
    public var sentMessages: [WebSocketMessage] { sent.current }
    private let sent = Guarded([WebSocketMessage]())

    /// The subprotocol: the first the client offered, as a peer that accepts it.
    public let negotiatedProtocol: String?
    /// A `101 Switching Protocols` head.
    public let upgradeResponse: ResponseHead

    init(url: URL, script: Script, configuration: WebSocketConfiguration) {
        self.script = script
        maximumMessageSize = configuration.maximumMessageSize
        negotiatedProtocol = configuration.protocols.first
        var headers: HTTPHeaderFields = ["Upgrade": "websocket", "Connection": "Upgrade"]
        if let chosen = configuration.protocols.first { headers.add(name: "Sec-WebSocket-Protocol", value: chosen) }
        upgradeResponse = ResponseHead(statusCode: 101, headers: headers, url: url)
        for message in script.greeting { deliver(message) }
    }

    /// The client sends `message`; the script answers it.
    public func send(_ message: WebSocketMessage) async throws {
        if let closed = state.current.closed { throw closed }
        sent.withLock { $0.append(message) }
        for answer in script.reply(message) { deliver(answer) }
        let answered = state.withLock { state -> Int in
            state.answered += 1
            return state.answered
        }
        if let limit = script.closesAfter, answered >= limit {
            finish(WebSocketClosedError(code: .normalClosure, reason: ""))
        }
    }

    /// The next message from the peer.
    public func receive() async throws -> WebSocketMessage {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<WebSocketMessage, any Error>? in
                if !state.inbox.isEmpty { return .success(state.inbox.removeFirst()) }
                if let closed = state.closed { return .failure(closed) }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The peer answers at once.
    public func sendPing() async throws {
        if let closed = state.current.closed { throw closed }
    }

    /// Closes with `code` and `reason`; the peer agrees at once.
    public func close(code: WebSocketCloseCode, reason: String) async {
        finish(WebSocketClosedError(code: code, reason: reason))
    }

    /// Returns once closed.
    public func waitUntilClosed() async {
        await withCheckedContinuation { continuation in
            let closed = state.withLock { state -> Bool in
                if state.closed != nil { return true }
                state.closedWaiters.append(continuation)
                return false
            }
            if closed { continuation.resume() }
        }
    }

    /// None: nothing was measured.
    public var metrics: TransactionMetrics? { nil }
    /// The close code, once closed.
    public var closeCode: WebSocketCloseCode? { state.current.closed?.code }
    /// The close reason, once closed.
    public var closeReason: String? { state.current.closed?.reason }

    private func deliver(_ message: WebSocketMessage) {
        let size: Int
        switch message {
        case .string(let text): size = text.utf8.count
        case .data(let data): size = data.count
        }
        guard size <= maximumMessageSize else {
            // As a real connection does with a message past the limit.
            return finish(WebSocketClosedError(code: .messageTooBig, reason: "message too big"))
        }
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketMessage, any Error>? in
            guard state.closed == nil else { return nil }
            if state.waiters.isEmpty {
                state.inbox.append(message)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: message)
    }

    private func finish(_ closed: WebSocketClosedError) {
        let (waiters, closedWaiters) = state.withLock { state in
            guard state.closed == nil else {
                return ([CheckedContinuation<WebSocketMessage, any Error>](), [CheckedContinuation<Void, Never>]())
            }
            state.closed = closed
            defer { (state.waiters, state.closedWaiters) = ([], []) }
            return (state.waiters, state.closedWaiters)
        }
        for waiter in waiters { waiter.resume(throwing: closed) }
        for waiter in closedWaiters { waiter.resume() }
    }
}
