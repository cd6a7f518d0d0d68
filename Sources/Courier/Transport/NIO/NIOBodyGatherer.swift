import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Gathers a response head and body for ``NIOTransport``'s collected exchanges, on the connection's event loop.
///
/// `@unchecked Sendable`: AsyncHTTPClient calls a delegate on one event loop, in order; the lock makes the parts
/// written there visible to whichever thread reads the result.
final class NIOBodyGatherer: HTTPClientResponseDelegate, @unchecked Sendable {
    /// The head and the whole body.
    struct Gathered: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer
        var timing: NIOExchangeTiming
    }

    private struct State {
        var head: HTTPResponseHead?
        var body: ByteBuffer?
        var timing = NIOExchangeTiming()
    }

    private let state = Locked(State())
    private let activity: @Sendable () -> Void
    private let smallHead: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - activity: called whenever bytes arrive.
    ///   - smallHead: called when the head of a response with a small declared body arrives, since the rest is then
    ///     bound to follow at once.
    init(activity: @escaping @Sendable () -> Void, smallHead: (@Sendable () -> Void)? = nil) {
        self.activity = activity
        self.smallHead = smallHead
    }

    /// Bodies up to this many bytes (as declared by `Content-Length`) count as small: a few reads of the socket.
    static let smallBody = 8 * 1024

    /// Whether a response head has arrived.
    var sawHead: Bool { state.withLock { $0.head != nil } }

    func didSendRequestHead(task: HTTPClient.Task<Gathered>, _ head: HTTPRequestHead) {
        let now = Date()
        state.withLock { $0.timing.requestStart = now }
    }

    func didSendRequest(task: HTTPClient.Task<Gathered>) {
        let now = Date()
        state.withLock { $0.timing.requestEnd = now }
    }

    func didReceiveHead(task: HTTPClient.Task<Gathered>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let now = Date()
        var head = head
        let connection = NIOConnectionReporter.takeFacts(from: &head.headers)
        state.withLock { state in
            state.head = head
            state.timing.responseStart = now
            state.timing.connection = connection
        }
        // The caller's wake-up is the slow part of a small exchange, so it starts before the activity stamp.
        if let smallHead, let length = head.headers.first(name: "Content-Length").flatMap({ Int($0) }),
            length <= Self.smallBody
        {
            smallHead()
        }
        activity()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Gathered>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        state.withLock { state in
            if state.body == nil {
                state.body = buffer  // the common single-part body: kept without a copy
            } else {
                var buffer = buffer
                state.body?.writeBuffer(&buffer)
            }
        }
        activity()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Gathered>) throws -> Gathered {
        let now = Date()
        return try state.withLock { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            state.timing.responseEnd = now
            return Gathered(head: head, body: state.body ?? ByteBuffer(), timing: state.timing)
        }
    }
}
