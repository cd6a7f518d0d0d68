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
        /// The body passed the limit and the task was failed: nothing more is kept.
        var refused = false
        /// The first URL the exchange visited; a second visit is a redirect the client followed.
        var firstURL: URL?
    }

    private let state = Locked(State())
    private let method: String
    private let maximumBodySize: Int?
    private let activity: @Sendable () -> Void
    private let smallHead: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - method: the request's method (a response to `HEAD` has no body, whatever its `Content-Length` says).
    ///   - maximumBodySize: the most body bytes to gather; past them the task fails with
    ///     ``CourierError/responseTooLarge(limit:context:)``. `nil` for no limit.
    ///   - activity: called whenever bytes arrive.
    ///   - smallHead: called when the head of a response with a small declared body arrives, since the rest is then
    ///     bound to follow at once.
    init(
        method: String, maximumBodySize: Int?, activity: @escaping @Sendable () -> Void,
        smallHead: (@Sendable () -> Void)?
    ) {
        self.method = method
        self.maximumBodySize = maximumBodySize.map { max($0, 0) }
        self.activity = activity
        self.smallHead = smallHead
    }

    /// Bodies up to this many bytes (as declared by `Content-Length`) count as small: a few reads of the socket.
    static let smallBody = 8 * 1024

    /// Whether a response head has arrived.
    var sawHead: Bool { state.withLock { $0.head != nil } }

    /// A second URL means that a caller's client followed a redirect (see ``NIOTransport/init(configuration:httpClient:)``):
    /// the exchange fails rather than deliver a response the session's redirect rules never saw.
    func didVisitURL(task: HTTPClient.Task<Gathered>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        let first = state.withLock { state -> URL? in
            defer { state.firstURL = state.firstURL ?? request.url }
            return state.firstURL
        }
        if let first { task.fail(reason: NIOTransport.redirectFollowedByClient(first)) }
    }

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
        if let maximumBodySize,
            CollectedBodyLimit.declaredLengthExceeds(
                maximumBodySize, method: method, statusCode: Int(head.status.code),
                contentLength: head.headers.first(name: "Content-Length"),
                contentEncoding: head.headers.first(name: "Content-Encoding"))
        {
            refuse(task, limit: maximumBodySize)
            return task.eventLoop.makeSucceededVoidFuture()
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
        let limit = maximumBodySize ?? .max
        let kept = state.withLock { state -> Bool in
            guard !state.refused else { return true }
            guard buffer.readableBytes <= limit - (state.body?.readableBytes ?? 0) else { return false }
            if state.body == nil {
                state.body = buffer  // the common single-part body: kept without a copy
            } else {
                var buffer = buffer
                state.body?.writeBuffer(&buffer)
            }
            return true
        }
        if !kept { refuse(task, limit: limit) }
        activity()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    /// Fails the task for a body past `limit` bytes (AsyncHTTPClient then closes the connection) and drops what was
    /// gathered.
    private func refuse(_ task: HTTPClient.Task<Gathered>, limit: Int) {
        let first = state.withLock { state -> Bool in
            defer {
                state.refused = true
                state.body = nil
            }
            return !state.refused
        }
        if first { task.fail(reason: CollectedBodyLimit.error(limit)) }
    }

    func didFinishRequest(task: HTTPClient.Task<Gathered>) throws -> Gathered {
        let now = Date()
        return try state.withLock { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            // The task was failed for its size; a body cut at the limit is never a response.
            if state.refused, let maximumBodySize { throw CollectedBodyLimit.error(maximumBodySize) }
            state.timing.responseEnd = now
            return Gathered(head: head, body: state.body ?? ByteBuffer(), timing: state.timing)
        }
    }
}
