import AsyncHTTPClient
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
    }

    private struct State {
        var head: HTTPResponseHead?
        var body: ByteBuffer?
    }

    private let state = Locked(State())
    private let activity: @Sendable () -> Void

    init(activity: @escaping @Sendable () -> Void) {
        self.activity = activity
    }

    func didReceiveHead(task: HTTPClient.Task<Gathered>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLock { $0.head = head }
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
        try state.withLock { state in
            guard let head = state.head else { throw HTTPClientError.remoteConnectionClosed }
            return Gathered(head: head, body: state.body ?? ByteBuffer())
        }
    }
}
