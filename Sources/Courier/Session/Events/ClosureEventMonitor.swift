import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``EventMonitor`` made of closures (Alamofire's `ClosureEventMonitor`): give the ones you watch, leave the rest
/// out.
///
/// ```swift
/// let monitor = ClosureEventMonitor(
///     taskDidComplete: { task, metrics, error in
///         print(task.originalRequest?.url?.absoluteString ?? "?", metrics.taskInterval.duration, error as Any)
///     })
/// var configuration = SessionConfiguration.default
/// configuration.eventMonitors = [monitor]
/// ```
///
/// The closures are set when it is made and never change, so it is `Sendable` as a value; each runs on the
/// monitor's ``queue``.
public struct ClosureEventMonitor: EventMonitor {
    /// The queue the closures run on; `nil`: a serial queue of the monitor's own.
    public let queue: DispatchQueue?
    /// See ``EventMonitor/taskCreated(_:)``.
    public let taskCreated: (@Sendable (SessionTask) -> Void)?
    /// See ``EventMonitor/taskResumed(_:)``.
    public let taskResumed: (@Sendable (SessionTask) -> Void)?
    /// See ``EventMonitor/taskSuspended(_:)``.
    public let taskSuspended: (@Sendable (SessionTask) -> Void)?
    /// See ``EventMonitor/taskCancelled(_:)``.
    public let taskCancelled: (@Sendable (SessionTask) -> Void)?
    /// See ``EventMonitor/task(_:willRedirectWith:to:)``.
    public let taskWillRedirect: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> Void)?
    /// See ``EventMonitor/task(_:didReceiveResponse:)``.
    public let taskDidReceiveResponse: (@Sendable (SessionTask, HTTPURLResponse) -> Void)?
    /// See ``EventMonitor/task(_:willRetryAfter:dueTo:)``.
    public let taskWillRetry: (@Sendable (SessionTask, Duration, CourierError) -> Void)?
    /// See ``EventMonitor/task(_:didReceiveData:)``.
    public let taskDidReceiveData: (@Sendable (SessionTask, Data) -> Void)?
    /// See ``EventMonitor/task(_:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)``: the step, the total
    /// and the total expected.
    public let taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
    /// See ``EventMonitor/task(_:didCompleteWith:error:)``.
    public let taskDidComplete: (@Sendable (SessionTask, TaskMetrics, (any Error)?) -> Void)?
    /// See ``EventMonitor/task(_:didSerializeResponse:)``.
    public let taskDidSerializeResponse: (@Sendable (SessionTask, Result<(any Sendable)?, any Error>) -> Void)?
    /// See ``EventMonitor/sessionDidBecomeInvalid(error:)``.
    public let sessionDidBecomeInvalid: (@Sendable ((any Error)?) -> Void)?

    /// A monitor that calls the closures given, on `queue`.
    public init(
        queue: DispatchQueue? = nil,
        taskCreated: (@Sendable (SessionTask) -> Void)? = nil,
        taskResumed: (@Sendable (SessionTask) -> Void)? = nil,
        taskSuspended: (@Sendable (SessionTask) -> Void)? = nil,
        taskCancelled: (@Sendable (SessionTask) -> Void)? = nil,
        taskWillRedirect: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> Void)? = nil,
        taskDidReceiveResponse: (@Sendable (SessionTask, HTTPURLResponse) -> Void)? = nil,
        taskWillRetry: (@Sendable (SessionTask, Duration, CourierError) -> Void)? = nil,
        taskDidReceiveData: (@Sendable (SessionTask, Data) -> Void)? = nil,
        taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)? = nil,
        taskDidComplete: (@Sendable (SessionTask, TaskMetrics, (any Error)?) -> Void)? = nil,
        taskDidSerializeResponse: (@Sendable (SessionTask, Result<(any Sendable)?, any Error>) -> Void)? = nil,
        sessionDidBecomeInvalid: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        self.queue = queue
        self.taskCreated = taskCreated
        self.taskResumed = taskResumed
        self.taskSuspended = taskSuspended
        self.taskCancelled = taskCancelled
        self.taskWillRedirect = taskWillRedirect
        self.taskDidReceiveResponse = taskDidReceiveResponse
        self.taskWillRetry = taskWillRetry
        self.taskDidReceiveData = taskDidReceiveData
        self.taskDidSendBodyData = taskDidSendBodyData
        self.taskDidComplete = taskDidComplete
        self.taskDidSerializeResponse = taskDidSerializeResponse
        self.sessionDidBecomeInvalid = sessionDidBecomeInvalid
    }

    /// Calls ``taskCreated``.
    public func taskCreated(_ task: SessionTask) { taskCreated?(task) }
    /// Calls ``taskResumed``.
    public func taskResumed(_ task: SessionTask) { taskResumed?(task) }
    /// Calls ``taskSuspended``.
    public func taskSuspended(_ task: SessionTask) { taskSuspended?(task) }
    /// Calls ``taskCancelled``.
    public func taskCancelled(_ task: SessionTask) { taskCancelled?(task) }
    /// Calls ``taskWillRedirect``.
    public func task(_ task: SessionTask, willRedirectWith response: HTTPURLResponse, to request: URLRequest) {
        taskWillRedirect?(task, response, request)
    }
    /// Calls ``taskDidReceiveResponse``.
    public func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse) {
        taskDidReceiveResponse?(task, response)
    }
    /// Calls ``taskWillRetry``.
    public func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
        taskWillRetry?(task, delay, error)
    }
    /// Calls ``taskDidReceiveData``.
    public func task(_ task: SessionTask, didReceiveData data: Data) { taskDidReceiveData?(task, data) }
    /// Calls ``taskDidSendBodyData``.
    public func task(
        _ task: SessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        taskDidSendBodyData?(task, bytesSent, totalBytesSent, totalBytesExpectedToSend)
    }
    /// Calls ``taskDidComplete``.
    public func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        taskDidComplete?(task, metrics, error)
    }
    /// Calls ``taskDidSerializeResponse``.
    public func task(_ task: SessionTask, didSerializeResponse result: Result<(any Sendable)?, any Error>) {
        taskDidSerializeResponse?(task, result)
    }
    /// Calls ``sessionDidBecomeInvalid``.
    public func sessionDidBecomeInvalid(error: (any Error)?) { sessionDidBecomeInvalid?(error) }
}
