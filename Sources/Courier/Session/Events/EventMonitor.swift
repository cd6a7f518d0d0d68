import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Watches every task of a session as it goes, on a queue of its own (Alamofire's `EventMonitor`).
///
/// Give monitors to a session with ``SessionConfiguration/eventMonitors``; logging, metrics and activity indicators
/// are built this way. Each method has an empty default, so a monitor implements only what it watches. A monitor
/// only watches: it cannot change a request or a response (hooks and interceptors decide).
///
/// Invariants: each state change of a task reaches each monitor exactly once, in the order the changes happened,
/// on the monitor's ``queue``; a task's last two events are ``task(_:didCompleteWith:error:)`` and then
/// ``task(_:didSerializeResponse:)``. The session does not wait for a monitor, so a slow monitor delays only itself.
public protocol EventMonitor: Sendable {
    /// The queue the monitor's methods are called on; `nil` (the default) gives the monitor a serial queue of its
    /// own.
    var queue: DispatchQueue? { get }

    /// The task was made and registered with the session.
    func taskCreated(_ task: SessionTask)
    /// The task started, or continued after a suspension.
    func taskResumed(_ task: SessionTask)
    /// The task was suspended.
    func taskSuspended(_ task: SessionTask)
    /// ``SessionTask/cancel()`` was called on a task that had not completed.
    func taskCancelled(_ task: SessionTask)
    /// The task follows a redirect: `response` is the 3xx, `request` the one sent next.
    func task(_ task: SessionTask, willRedirectWith response: HTTPURLResponse, to request: URLRequest)
    /// The final response head arrived (not a redirect or an answered challenge).
    func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse)
    /// A retrier asked for the task's request to be sent again after `delay`, because of `error`.
    func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError)
    /// Bytes of the response body arrived; a body the transport gathered whole arrives as one `data`.
    func task(_ task: SessionTask, didReceiveData data: Data)
    /// Request-body bytes went out: this step, the total so far, and the total expected (`-1` when unknown).
    func task(
        _ task: SessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)
    /// The task finished, with what it took and its error (transport errors, timeouts, cancellation), if any.
    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?)
    /// The task's response was serialized: the object (for downloads, the file's URL; `nil` for a streamed body),
    /// or the error of the task or of its serializer.
    func task(_ task: SessionTask, didSerializeResponse result: Result<(any Sendable)?, any Error>)
    /// The session was invalidated and its last task has completed.
    func sessionDidBecomeInvalid(error: (any Error)?)
}

extension EventMonitor {
    /// `nil`: a serial queue of the monitor's own.
    public var queue: DispatchQueue? { nil }
    /// Does nothing.
    public func taskCreated(_ task: SessionTask) {}
    /// Does nothing.
    public func taskResumed(_ task: SessionTask) {}
    /// Does nothing.
    public func taskSuspended(_ task: SessionTask) {}
    /// Does nothing.
    public func taskCancelled(_ task: SessionTask) {}
    /// Does nothing.
    public func task(_ task: SessionTask, willRedirectWith response: HTTPURLResponse, to request: URLRequest) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse) {}
    /// Does nothing.
    public func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didReceiveData data: Data) {}
    /// Does nothing.
    public func task(
        _ task: SessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didSerializeResponse result: Result<(any Sendable)?, any Error>) {}
    /// Does nothing.
    public func sessionDidBecomeInvalid(error: (any Error)?) {}
}
