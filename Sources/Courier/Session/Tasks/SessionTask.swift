import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request's life in a ``SessionManager``: Courier's own, transport-independent `URLSessionTask`.
///
/// Factories return tasks suspended; ``resume()`` starts them. The state only moves forward:
/// suspended → running ⇄ suspended → canceling → completed (or running → completed). The completion handler runs
/// exactly once, whether the task finishes, fails, times out or is cancelled.
///
/// Thread safety: all mutable state is behind one lock, so a task may be resumed, suspended, cancelled and read from
/// any thread; that is why the class is `@unchecked Sendable`.
public class SessionTask: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// A task's state.
    public enum State: Sendable, Hashable {
        /// Not started yet, or paused: a suspended task reads no more of the response body.
        case suspended
        /// Sending or receiving.
        case running
        /// ``cancel()`` was called and the task is winding down.
        case canceling
        /// Finished, one way or another.
        case completed
    }

    /// Unique within the process.
    public let taskIdentifier: Int
    /// The request the task was created with.
    ///
    /// For a plain `async` call this is made from the serialized request on first use (see `TaskRequest`).
    public var originalRequest: URLRequest? {
        guard case .plain = requestSource else { return requestSource.make() }
        if let made = mutable.withLock({ $0.madeOriginal }) { return made }
        let made = requestSource.make()
        return mutable.withLock { state in
            if state.madeOriginal == nil { state.madeOriginal = made }
            return state.madeOriginal
        }
    }
    /// What ``originalRequest`` is, or is made from.
    let requestSource: TaskRequest

    /// Whether ``resume()`` runs the task's request; `false` for a task whose feature opens its connection itself
    /// (``ConnectionTask``).
    var runsWhenResumed: Bool { true }

    /// The task's one lock and everything that changes under it; the session's `TaskDelegate` shares it.
    let mutable: Locked<TaskState>
    weak var controller: (any TaskController)?

    private static let identifiers = Locked(0)

    /// A task for `source`; a plain request's `URLRequest` is made only when something asks for it.
    init(source: TaskRequest, controller: any TaskController) {
        taskIdentifier = Self.identifiers.withLock {
            $0 += 1
            return $0
        }
        requestSource = source
        mutable = Locked(TaskState())
        self.controller = controller
    }

    convenience init(request: URLRequest?, controller: any TaskController) {
        self.init(source: .made(request), controller: controller)
    }

    /// The state, as of this call.
    public var state: State { mutable.withLock { $0.state } }
    /// The request being sent now: differs from ``originalRequest`` after a redirect.
    public var currentRequest: URLRequest? { mutable.withLock { $0.currentRequest } ?? originalRequest }
    /// The response head, once it has arrived.
    public var response: HTTPURLResponse? { head?.response }
    /// The HTTP version the response came with (`HTTP/1.1`, `HTTP/1.0`, `HTTP/2`), once its head has arrived.
    public var httpVersion: String? { head?.httpVersion }
    /// The response head as the transport delivered it; ``response`` is made from it on first use.
    var head: ResponseHead? { mutable.withLock { $0.response } }
    /// The latest response head as the transport delivered it (after redirects, the final one), once one has
    /// arrived: the header fields in order, each name as the server wrote it, repeated fields (two `Set-Cookie`) kept
    /// apart, where ``response`` (Foundation's form) joins them.
    public var responseHead: ResponseHead? { head }
    /// Why the task failed (transport errors, cancellation, timeouts; not serialization errors), once it has.
    public var error: (any Error)? { mutable.withLock { $0.error } }
    /// How many times the task's request was sent again at a retrier's word (see ``RequestRetrier``).
    public var retryCount: Int { mutable.withLock { $0.retryCount } }
    /// What the task took, once it has completed (Alamofire's `Request.metrics`); `nil` before.
    public var metrics: TaskMetrics? { mutable.withLock { $0.metrics } }
    /// A description of your choosing.
    public var taskDescription: String? {
        get { mutable.withLock { $0.taskDescription } }
        set { mutable.withLock { $0.taskDescription = newValue } }
    }
    /// Request-body bytes sent so far.
    public var countOfBytesSent: Int64 { mutable.withLock { $0.bytesSent } }
    /// Request-body bytes to send, or `-1` when unknown.
    public var countOfBytesExpectedToSend: Int64 { mutable.withLock { $0.bytesExpectedToSend } }
    /// Response-body bytes received so far.
    public var countOfBytesReceived: Int64 { mutable.withLock { $0.bytesReceived } }
    /// Response-body bytes expected, or `-1` when unknown.
    public var countOfBytesExpectedToReceive: Int64 { mutable.withLock { $0.bytesExpectedToReceive } }

    /// The task's progress as a Foundation `Progress` (`URLSessionTask.progress`, what AFNetworking's
    /// `uploadProgressForTask:` and `downloadProgressForTask:` return): the request body's bytes for an
    /// ``UploadTask``, the response body's for any other task, updated as they move (at most every 50 ms, as
    /// ``TaskProgress`` is) and complete when the task succeeds. Its `cancel()` cancels the task, its `pause()`
    /// suspends it and its `resume()` resumes it. Made on first use; the same object afterwards.
    public var progress: Progress {
        let (progress, made) = mutable.withLock { $0.liveProgress(followsUpload: self is UploadTask) }
        if made {
            progress.isCancellable = true
            progress.isPausable = true
            progress.cancellationHandler = { [weak self] in self?.cancel() }
            // Foundation runs the handlers later, on a concurrent queue (swift-corelibs-foundation), so a pause()
            // and a resume() in a row may have theirs run in either order. Each therefore applies whatever
            // `isPaused` says when it runs, one at a time: the last to run sees the last call's value.
            let gate = Locked(())
            let follow: @Sendable () -> Void = { [weak self, weak progress] in
                gate.withLock { _ in
                    guard let self, let progress else { return }
                    if progress.isPaused { self.suspend() } else { self.resume() }
                }
            }
            progress.pausingHandler = follow
            progress.resumingHandler = follow
        }
        return progress
    }

    /// Starts the task, or continues reading a suspended one. Does nothing once it is canceling or completed.
    public func resume() {
        startRunning()
    }

    /// ``resume()``'s work, which a subclass that overrides ``resume()`` still reaches.
    final func startRunning() {
        let actions = mutable.withLock { $0.resume() }
        guard let announced = actions.announce else { return }
        controller?.taskDidChangeState(self, to: announced)
        if actions.start { controller?.start(self) }
    }

    /// Pauses a running task: it stops reading the response body (so the transport stops reading the socket)
    /// until ``resume()``. A chunk, or the body's end, that a read already waiting brings is held until then too, so
    /// nothing more is counted or delivered (only a chunk already being delivered when this is called lands). Does
    /// nothing unless the task is running.
    public func suspend() {
        if let announced = mutable.withLock({ $0.lifecycle.suspend() }).announce {
            controller?.taskDidChangeState(self, to: announced)
        }
    }

    /// Cancels the task: it completes with ``CourierError/cancelled(context:)`` (code -999), even if it was never
    /// resumed. Does nothing once the task is canceling or completed.
    public func cancel() {
        let actions = mutable.withLock { $0.cancel() }
        guard let announced = actions.announce else { return }
        controller?.taskDidChangeState(self, to: announced)
        if actions.cancelRunner { cancelExecution() }
        if actions.completeUnstarted { controller?.cancelBeforeStart(self) }
    }

    /// Records how to cancel the Swift task now running this task; if ``cancel()`` came first, cancels it at once.
    func attachRunner(_ cancelRunner: @escaping @Sendable () -> Void) {
        let cancelledMeanwhile = mutable.withLock { state -> Bool in
            state.cancelRunner = cancelRunner
            return state.state == .canceling
        }
        if cancelledMeanwhile { cancelRunner() }
    }

    /// Interrupts the task's runner. Cancelling runs cancellation handlers synchronously, and those may call back
    /// into this object, so it happens outside the lock.
    func cancelExecution() {
        mutable.withLock { $0.cancelRunner }?()
    }

    /// Waits while the task is suspended; returns at once when it is running, canceling or completed.
    func waitWhileSuspended() async {
        // The common case, once per body chunk: running, so no continuation is made.
        guard mutable.withLock({ $0.state == .suspended }) else { return }
        await withCheckedContinuation { continuation in
            if !mutable.withLock({ $0.wait(continuation) }) { continuation.resume() }
        }
    }

    /// Marks the task completed and makes its metrics; `false` if it already was (so completion happens exactly
    /// once).
    func markCompleted(error: (any Error)?) -> Bool {
        let end = Date()
        return mutable.withLock { $0.complete(error: error, end: end) }
    }

    /// Whether ``cancel()`` has been called.
    var isCancelling: Bool { mutable.withLock { $0.state == .canceling } }

    /// Tasks are equal when they are the same object.
    public static func == (lhs: SessionTask, rhs: SessionTask) -> Bool { lhs === rhs }

    /// Hashes the object identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// E.g. `DataTask 3 GET https://example.com/x (running)`.
    public var description: String {
        let request = requestSource.url.map { "\(requestSource.method) \($0.absoluteString)" } ?? ""
        return "\(type(of: self)) \(taskIdentifier) \(request) (\(state))"
    }
}

/// A task whose response body is collected in memory (`NSURLSessionDataTask`).
public class DataTask: SessionTask, @unchecked Sendable {}

/// A data task that sends a body from data, a file or a stream (`NSURLSessionUploadTask`).
public final class UploadTask: DataTask, @unchecked Sendable {}

/// A task whose response body is written to a file (`NSURLSessionDownloadTask`).
public final class DownloadTask: SessionTask, @unchecked Sendable {
    /// Cancels the download and hands `completion` the data to continue it with
    /// ``SessionManager/downloadTask(withResumeData:progress:destination:options:completionHandler:)``, or `nil`
    /// when it cannot be continued (it has not started, it already finished, or the server sent no strong
    /// validator). `completion` runs once, before the task's completion handler.
    public func cancel(producingResumeData completion: @escaping @Sendable (Data?) -> Void) {
        guard state == .running || state == .suspended,
            controller?.wantResumeData(for: self, handler: completion) == true
        else {
            cancel()
            completion(nil)
            return
        }
        cancel()
    }

    /// Cancels the download and returns the data to continue it, or `nil`; see ``cancel(producingResumeData:)``.
    public func cancelProducingResumeData() async -> Data? {
        await withCheckedContinuation { continuation in
            cancel(producingResumeData: { continuation.resume(returning: $0) })
        }
    }
}

/// What a task asks of the session that runs it.
protocol TaskController: AnyObject, Sendable {
    func start(_ task: SessionTask)
    func cancelBeforeStart(_ task: SessionTask)
    func wantResumeData(for task: SessionTask, handler: @escaping @Sendable (Data?) -> Void) -> Bool
    func taskDidChangeState(_ task: SessionTask, to state: SessionTask.State)
}

/// A task's request: Foundation's `URLRequest`, or the plain request (see ``HTTPRequestSerializer``'s
/// `plainRequest(method:url:parameters:)`) that one is made from only when something asks for it.
///
/// The common `async` call sends a plain request and reads back only its URL, method, cookie flag and timeout; those
/// are answered here without Foundation. ``make()`` gives the `URLRequest` a task reports, equal on every call.
enum TaskRequest: Sendable {
    case made(URLRequest?)
    case plain(PlainRequest, HTTPRequestSerializer)

    /// Foundation's request.
    func make() -> URLRequest? {
        switch self {
        case .made(let request): request
        case .plain(let plain, let serializer): serializer.request(from: plain)
        }
    }

    /// Foundation's request when this is one; `nil` for a plain request (still the task's original).
    var made: URLRequest? {
        guard case .made(let request) = self else { return nil }
        return request
    }

    var url: URL? {
        switch self {
        case .made(let request): request?.url
        case .plain(let plain, _): plain.url
        }
    }

    /// The method as set (`GET` when none is).
    var method: String {
        switch self {
        case .made(let request): request?.httpMethod ?? "GET"
        case .plain(let plain, _): plain.method
        }
    }

    /// The cache policy the request will have (a plain request's is its serializer's); `nil`: the session's.
    var cachePolicy: URLRequest.CachePolicy? {
        let policy =
            switch self {
            case .made(let request): request?.cachePolicy
            case .plain(_, let serializer): serializer.cachePolicy
            }
        return policy == .useProtocolCachePolicy ? nil : policy
    }

    /// `URLRequest.httpShouldHandleCookies`.
    var handlesCookies: Bool {
        switch self {
        case .made(let request): request?.httpShouldHandleCookies ?? true
        case .plain(let plain, _): plain.handlesCookies
        }
    }

    /// `URLRequest.httpBody` (a plain request has none).
    var httpBody: Data? {
        switch self {
        case .made(let request): request?.httpBody
        case .plain: nil
        }
    }

    /// `URLRequest.timeoutInterval` when one was set on the request or its serializer; `nil` for the default.
    var timeoutInterval: TimeInterval? {
        let interval =
            switch self {
            case .made(let request): request?.timeoutInterval
            case .plain(_, let serializer): serializer.timeoutInterval
            }
        return interval == Self.defaultTimeoutInterval ? nil : interval
    }

    /// A new `URLRequest`'s timeout.
    static let defaultTimeoutInterval: TimeInterval = {
        guard let url = URL(string: "http://localhost") else { return 60 }
        return URLRequest(url: url).timeoutInterval
    }()
}
