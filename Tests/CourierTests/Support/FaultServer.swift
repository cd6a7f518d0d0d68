import Foundation
import NIOCore
import NIOPosix

@testable import Courier

/// A tiny TCP server that answers HTTP requests with canned, possibly broken, bytes: for fault-injection tests.
///
/// It works below HTTP: it reads a request up to its blank line (`\r\n\r\n`, any body is not expected) and then
/// writes whatever its ``Behaviour`` says, byte for byte, so it can misbehave in ways a real HTTP server cannot.
/// Every server counts the connections and requests it sees (``connectionCount``, ``requestCount``).
///
/// ```swift
/// let server = try await FaultServer.start(.closeMidBody)
/// defer { Task { try await server.stop() } }
/// let request = URLRequest(url: server.baseURL)
/// ```
final class FaultServer: Sendable {
    /// What the server does with each request.
    enum Behaviour: Sendable {
        /// Writes `bytes` as they are, then closes the connection when `close` is `true`, else waits for the next
        /// request on it.
        case respond(Data, close: Bool)
        /// A `200` head with `Content-Length: 1000`, 10 bytes of body, then close.
        case closeMidBody
        /// A `200` head with `Content-Length: declared`, then `sent` bytes of body, then close.
        case wrongContentLength(declared: Int, sent: Int)
        /// `HELLO WORLD\r\n\r\n` instead of a status line; the connection stays open.
        case garbageStatusLine
        /// ``FaultServer/ok(_:)`` after `headAfter` seconds; with `nil`, no answer at all (the connection stays open).
        case slow(headAfter: TimeInterval?)
        /// ``FaultServer/ok(_:)`` `linger` seconds after `count` requests were in flight at once (or after `atMost`
        /// seconds of waiting for them); once they were, every later request is answered after `linger`. For a
        /// test that `count` clients really run side by side, with no bet on how soon a loaded machine starts them.
        case together(count: Int, linger: TimeInterval, atMost: TimeInterval)
        /// A `200` head with `Content-Length: bytes` at once, then one byte of body every `every` seconds.
        case slowBody(bytes: Int, every: TimeInterval)
        /// Writes what `answer` makes of the request head (its text, up to the blank line), then closes the
        /// connection when `close` is `true`.
        case reply(close: Bool, answer: @Sendable (_ head: String) -> Data)
        /// Answers each request as `answer` decides from its head: bytes (then closes or not, after a delay or at
        /// once), or a body without end.
        case script(answer: @Sendable (_ head: String) -> Answer)

        /// `Content-Length: 100` but only 5 bytes, then close.
        static let shortBody = Behaviour.wrongContentLength(declared: 100, sent: 5)
        /// `Content-Length: 5` but 20 bytes, then close.
        static let longBody = Behaviour.wrongContentLength(declared: 5, sent: 20)
        /// A well-behaved keep-alive server answering every request with ``FaultServer/ok(_:)``: for counting
        /// connections (every server counts them; this one does nothing else).
        static let countingConnections = Behaviour.respond(FaultServer.ok(), close: false)
    }

    /// One answer of ``Behaviour/script(answer:)``.
    enum Answer: Sendable {
        /// Writes `bytes` after `delay` seconds, then closes the connection when `close` is `true`.
        case bytes(Data, close: Bool, delay: TimeInterval = 0)
        /// Writes `head`, then `chunk` again and again, each once the last was written, until the connection closes.
        case endless(head: Data, chunk: Data)
    }

    /// What the server has seen so far, and the connections still open (so ``stop()`` can close them).
    struct Record {
        var connections = 0
        var requests = 0
        var heads: [String] = []
        var open: [ObjectIdentifier: any Channel] = [:]
        /// ``Behaviour/slow(headAfter:)`` and ``Behaviour/together(count:linger:atMost:)`` only: requests read and
        /// not answered yet, now and at most.
        var inFlight = 0
        var maxInFlight = 0
        /// ``Behaviour/together(count:linger:atMost:)``: the answers held until enough requests are in flight.
        var held: [@Sendable () -> Void] = []
    }

    /// The port the server listens on, on 127.0.0.1.
    let port: Int
    /// `http://127.0.0.1:<port>/`.
    let baseURL: URL
    private let channel: any Channel
    private let record: Locked<Record>

    private init(channel: any Channel, port: Int, baseURL: URL, record: Locked<Record>) {
        self.channel = channel
        self.port = port
        self.baseURL = baseURL
        self.record = record
    }

    /// Starts a server with `behaviour` on a free port of 127.0.0.1.
    static func start(_ behaviour: Behaviour) async throws -> FaultServer {
        let record = Locked(Record())
        let (channel, port, url) = try await LoopbackServer.bind(path: "") { pipeline in
            try pipeline.addHandler(FaultHandler(behaviour: behaviour, record: record))
        }
        return FaultServer(channel: channel, port: port, baseURL: url, record: record)
    }

    /// How many connections have been accepted so far.
    var connectionCount: Int { record.withLock { $0.connections } }
    /// How many request heads have been read so far.
    var requestCount: Int { record.withLock { $0.requests } }
    /// The request heads read so far, as text up to (not including) the blank line.
    var requestHeads: [String] { record.withLock { $0.heads } }
    /// ``Behaviour/slow(headAfter:)`` only: the most requests the server held unanswered at once.
    var maxRequestsInFlight: Int { record.withLock { $0.maxInFlight } }
    /// How many connections are open now.
    var openConnectionCount: Int { record.withLock { $0.open.count } }

    /// Stops listening and closes every connection still open.
    func stop() async throws {
        try await channel.close()
        let open = record.withLock { Array($0.open.values) }
        for child in open { try? await child.close() }
    }

    // MARK: Canned bytes

    /// A complete `200` response with a `text/plain` body and `Content-Length`.
    static func ok(_ body: String = "hello") -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    /// A `200` head announcing `contentLength` bytes of `application/octet-stream`.
    static func head(contentLength: Int) -> [UInt8] {
        Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(contentLength)\r\n\r\n".utf8
        )
    }

    /// The body bytes at `offsets`: the lower-case alphabet, repeated.
    static func body(_ offsets: Range<Int>) -> [UInt8] {
        offsets.map { UInt8(ascii: "a") + UInt8($0 % 26) }
    }
}

/// The server could not be started.
enum FaultServerError: Error {
    /// The bound socket has no port.
    case noPort
}

/// Reads request heads and answers each one as the behaviour says. Runs on its channel's event loop only.
private final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let behaviour: FaultServer.Behaviour
    private let record: Locked<FaultServer.Record>
    private var pending: [UInt8] = []
    private var timer: Scheduled<Void>?

    init(behaviour: FaultServer.Behaviour, record: Locked<FaultServer.Record>) {
        self.behaviour = behaviour
        self.record = record
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        record.withLock { record in
            record.connections += 1
            record.open[ObjectIdentifier(channel)] = channel
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        let id = ObjectIdentifier(context.channel)
        record.withLock { _ = $0.open.removeValue(forKey: id) }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let end = headEnd() {
            let head = String(decoding: pending[..<(end - 4)], as: UTF8.self)
            pending.removeFirst(end)
            record.withLock {
                $0.requests += 1
                $0.heads.append(head)
            }
            answer(context, head: head)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)  // e.g. a reset by the client: nothing to report
    }

    /// The index just past the first `\r\n\r\n` in `pending`.
    private func headEnd() -> Int? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard pending.count >= 4 else { return nil }
        for start in 0...(pending.count - 4) where pending[start..<start + 4].elementsEqual(terminator) {
            return start + 4
        }
        return nil
    }

    /// ``Behaviour/together(count:linger:atMost:)``: holds this request's answer until `count` are in flight (the
    /// last of them lets all go), or `atMost`; then answers after `linger`, once.
    private func together(_ context: ChannelHandlerContext, count: Int, linger: TimeInterval, atMost: TimeInterval) {
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let boundContext = NIOLoopBound(context, eventLoop: loop)
        let released = Locked(false)
        let release: @Sendable () -> Void = {
            guard
                released.withLock({ done in
                    defer { done = true }
                    return !done
                })
            else { return }
            loop.scheduleTask(in: Self.amount(linger)) {
                handler.value.record.withLock { $0.inFlight -= 1 }
                handler.value.write(boundContext.value, Array(FaultServer.ok()), close: false)
            }
        }
        let go = record.withLock { record -> [@Sendable () -> Void] in
            record.inFlight += 1
            record.maxInFlight = max(record.maxInFlight, record.inFlight)
            if record.maxInFlight >= count {
                defer { record.held = [] }
                return record.held + [release]
            }
            record.held.append(release)
            return []
        }
        go.forEach { $0() }
        timer = loop.assumeIsolated().scheduleTask(in: Self.amount(atMost)) { release() }
    }

    private func answer(_ context: ChannelHandlerContext, head: String) {
        switch behaviour {
        case .reply(let close, let answer):
            write(context, Array(answer(head)), close: close)
        case .respond(let bytes, let close):
            write(context, Array(bytes), close: close)
        case .script(let answer):
            switch answer(head) {
            case .bytes(let bytes, let close, let delay) where delay > 0:
                timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.amount(delay)) {
                    self.write(context, Array(bytes), close: close)
                }
            case .bytes(let bytes, let close, _):
                write(context, Array(bytes), close: close)
            case .endless(let head, let chunk):
                write(context, Array(head), close: false)
                pour(context, context.channel.allocator.buffer(bytes: chunk))
            }
        case .closeMidBody:
            write(context, FaultServer.head(contentLength: 1000) + FaultServer.body(0..<10), close: true)
        case .wrongContentLength(let declared, let sent):
            write(context, FaultServer.head(contentLength: declared) + FaultServer.body(0..<sent), close: true)
        case .garbageStatusLine:
            write(context, Array("HELLO WORLD\r\n\r\n".utf8), close: false)
        case .slow(let delay):
            record.withLock {
                $0.inFlight += 1
                $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
            }
            guard let delay else { return }
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.amount(delay)) {
                self.record.withLock { $0.inFlight -= 1 }
                self.write(context, Array(FaultServer.ok()), close: false)
            }
        case .together(let count, let linger, let atMost):
            together(context, count: count, linger: linger, atMost: atMost)
        case .slowBody(let count, let interval):
            write(context, FaultServer.head(contentLength: count), close: false)
            drip(context, from: 0, count: count, interval: Self.amount(interval))
        }
    }

    /// Writes `chunk`, and again once it is written, until the connection is gone.
    private func pour(_ context: ChannelHandlerContext, _ chunk: ByteBuffer) {
        guard context.channel.isActive else { return }
        context.writeAndFlush(wrapOutboundOut(chunk)).assumeIsolated().whenComplete { result in
            guard case .success = result else { return context.close(promise: nil) }
            self.pour(context, chunk)
        }
    }

    /// Writes byte `offset` of the body after `interval`, then schedules the next one.
    private func drip(_ context: ChannelHandlerContext, from offset: Int, count: Int, interval: TimeAmount) {
        guard offset < count else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            self.write(context, FaultServer.body(offset..<offset + 1), close: false)
            self.drip(context, from: offset + 1, count: count, interval: interval)
        }
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8], close: Bool) {
        let written = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)))
        if close {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private static func amount(_ seconds: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}
