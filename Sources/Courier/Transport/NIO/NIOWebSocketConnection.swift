import Foundation
import NIOCore
import NIOWebSocket

/// ``NIOTransport``'s WebSocket connection: the messages its ``NIOWebSocketHandler`` reassembles wait here for
/// ``receive()``, and sends go straight to the channel.
///
/// Invariants: at most ``inboxLimit`` messages wait; past that the channel stops reading (backpressure reaches the
/// server through TCP) until ``receive()`` takes one. It also stops reading while the channel is not writable, so a
/// server that sends what must be answered (pings) and reads nothing cannot make the answers pile up here. The
/// connection closes once, and from then on every call fails with the same ``WebSocketClosedError``.
final class NIOWebSocketConnection: WebSocketConnection {
    private struct State {
        var messages: [WebSocketMessage] = []
        var receivers: [CheckedContinuation<WebSocketMessage, any Error>] = []
        var pings: [CheckedContinuation<Void, any Error>] = []
        var closed: WebSocketClosedError?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// Reading was stopped because the inbox was full.
        var paused = false
        /// The channel's writes are past its high-water mark: reading waits until they drain.
        var unwritable = false
        /// A close frame has been sent (by either side's initiative).
        var sentClose = false
    }

    static let inboxLimit = 16

    let negotiatedProtocol: String?
    let upgradeResponse: ResponseHead
    let channel: any Channel
    private let state = Locked(State())

    let metrics: TransactionMetrics?

    init(channel: any Channel, upgradeResponse: ResponseHead, metrics: TransactionMetrics?) {
        self.channel = channel
        self.upgradeResponse = upgradeResponse
        self.metrics = metrics
        negotiatedProtocol = upgradeResponse.headers["Sec-WebSocket-Protocol"]
    }

    var closeCode: WebSocketCloseCode? { state.withLock { $0.closed?.code } }
    var closeReason: String? { state.withLock { $0.closed?.reason } }

    // MARK: The handler's side (on the event loop)

    /// A whole message arrived; returns `true` when the inbox is full and reading should pause.
    func arrived(_ message: WebSocketMessage) -> Bool {
        let (receiver, full) = state.withLock { state -> (CheckedContinuation<WebSocketMessage, any Error>?, Bool) in
            if !state.receivers.isEmpty { return (state.receivers.removeFirst(), false) }
            state.messages.append(message)
            // Once paused, only `receive()` resumes reading: frames already read may still arrive meanwhile.
            guard !state.paused, state.messages.count >= Self.inboxLimit else { return (nil, false) }
            state.paused = true
            return (nil, true)
        }
        receiver?.resume(returning: message)
        return full
    }

    func pongArrived() {
        let ping = state.withLock { $0.pings.isEmpty ? nil : $0.pings.removeFirst() }
        ping?.resume()
    }

    /// The channel's writability changed (on the event loop): reading stops while it is not writable.
    func writabilityChanged(_ writable: Bool) {
        state.withLock { $0.unwritable = !writable }
        if writable {
            readIfAllowed()
        } else {
            channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    /// Whether a close frame has been sent (or is being sent): nothing may follow it.
    var hasSentClose: Bool { state.withLock { $0.sentClose } }

    /// Marks that a close frame is to be sent; `false` when one already was.
    func claimCloseFrame() -> Bool {
        state.withLock { state in
            defer { state.sentClose = true }
            return !state.sentClose
        }
    }

    /// The connection has closed with `error` (the first call wins): every waiter fails with it.
    func closed(_ error: WebSocketClosedError) {
        let (final, receivers, pings, waiters) = state.withLock { state in
            let final = state.closed ?? error
            state.closed = final
            defer {
                state.receivers = []
                state.pings = []
                state.closeWaiters = []
            }
            return (final, state.receivers, state.pings, state.closeWaiters)
        }
        for receiver in receivers { receiver.resume(throwing: final) }
        for ping in pings { ping.resume(throwing: final) }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: The user's side

    func send(_ message: WebSocketMessage) async throws {
        if let closed = state.withLock({
            $0.closed ?? ($0.sentClose ? WebSocketClosedError(code: .normalClosure, reason: "") : nil)
        }) {
            throw closed
        }
        let frame: WebSocketFrame
        switch message {
        case .string(let text):
            frame = WebSocketFrame(
                fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: text))
        case .data(let data):
            frame = WebSocketFrame(
                fin: true, opcode: .binary, maskKey: .random(), data: channel.allocator.buffer(bytes: data))
        }
        // While the channel takes more, a send does not wait for its write: waiting would cost a round trip to the
        // event loop per message. Once NIO's write buffer passes its high-water mark, each send waits for its write,
        // so a sender never runs ahead of the socket by more than that. A write that fails closes the channel, and
        // the next call sees the close.
        guard !channel.isWritable else {
            channel.writeAndFlush(frame, promise: nil)
            return
        }
        do {
            try await channel.writeAndFlush(frame)
        } catch {
            throw state.withLock { $0.closed } ?? WebSocketClosedError(code: .abnormalClosure, reason: "")
        }
    }

    func receive() async throws -> WebSocketMessage {
        let (message, resume) = try state.withLock { state -> (WebSocketMessage?, Bool) in
            guard !state.messages.isEmpty else {
                if let closed = state.closed { throw closed }
                return (nil, false)
            }
            let message = state.messages.removeFirst()
            let resume = state.paused && state.messages.count <= Self.inboxLimit / 2
            if resume { state.paused = false }
            return (message, resume)
        }
        if resume { resumeReading() }
        if let message { return message }
        return try await withCheckedThrowingContinuation { continuation in
            let now = state.withLock { state -> Result<WebSocketMessage, any Error>? in
                if !state.messages.isEmpty { return .success(state.messages.removeFirst()) }
                if let closed = state.closed { return .failure(closed) }
                state.receivers.append(continuation)
                return nil
            }
            if let now { continuation.resume(with: now) }
        }
    }

    func sendPing() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let closed = state.withLock { state -> WebSocketClosedError? in
                if let closed = state.closed { return closed }
                state.pings.append(continuation)
                return nil
            }
            if let closed { return continuation.resume(throwing: closed) }
            let frame = WebSocketFrame(
                fin: true, opcode: .ping, maskKey: .random(), data: channel.allocator.buffer(capacity: 0))
            channel.writeAndFlush(frame, promise: nil)
        }
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        if claimCloseFrame() {
            channel.writeAndFlush(
                Self.closeFrame(code: code, reason: reason, allocator: channel.allocator), promise: nil)
            // The server's close frame ends it; a server that never answers does not keep it open.
            let channel = channel
            channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        }
        await waitUntilClosed()
    }

    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.closed != nil { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func resumeReading() {
        channel.eventLoop.execute { self.readIfAllowed() }
    }

    /// On the event loop: reads again unless the inbox is full or the channel is not writable (whichever stopped
    /// reading last, the other may still hold it).
    private func readIfAllowed() {
        guard state.withLock({ !$0.paused && !$0.unwritable }) else { return }
        let channel = channel
        channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
    }

    /// A masked close frame with `code` and `reason`, the reason cut to fit 123 bytes (at a character boundary).
    static func closeFrame(code: WebSocketCloseCode, reason: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var buffer = allocator.buffer(capacity: 125)
        buffer.writeInteger(code.isSendable ? code.rawValue : WebSocketCloseCode.normalClosure.rawValue)
        var bytes = 0
        var kept = ""
        for character in reason {
            let count = character.utf8.count
            guard bytes + count <= 123 else { break }
            bytes += count
            kept.append(character)
        }
        buffer.writeString(kept)
        return WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: buffer)
    }
}
