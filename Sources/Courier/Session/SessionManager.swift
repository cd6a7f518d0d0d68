import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Creates and runs tasks, one task delegate per task (`AFURLSessionManager`).
///
/// ```swift
/// let manager = SessionManager()
/// let task = manager.dataTask(with: request) { response, object, error in handle(object, error) }
/// task.resume()
/// ```
///
/// Factories return suspended tasks, as AFNetworking's do. Each running task has a runner on Swift's concurrent
/// pool, where its response is serialized, off the transport's threads (AFNetworking's processing queue);
/// completion handlers run on ``completionQueue`` (the main queue by default) inside ``completionGroup``.
/// The notifications of those tasks (`Notification.Name.taskDidResume` …) are posted on ``notificationQueue`` (the
/// main queue by default, as AFNetworking posts them), and ``events()`` delivers the same changes as an
/// `AsyncStream`, on no queue. The `async` calls need no queue at all: their notifications are posted at once.
///
/// On Linux nothing drains the main queue unless the program does: an `async` main, `dispatchMain()` or a run loop.
/// A program without one that uses completion handlers or notifications sets ``completionQueue`` and
/// ``notificationQueue`` to queues of its own.
///
/// A task a resume started keeps its manager alive until it completes, as a URLSession keeps its delegate, so a
/// manager made for one call and released at once (AFNetworking's `[[AFHTTPSessionManager manager] GET:…]`) still
/// completes the call; an idle manager is freed when released (it has nothing to cancel), and
/// ``invalidate(cancelingTasks:)`` ends a kept one early. An `async` call keeps its manager while it awaits.
///
/// Thread safety: the manager's mutable settings live in its core behind a lock, so it can be used from any
/// thread; that is why it is `@unchecked Sendable` (a non-final class cannot be checked).
open class SessionManager: @unchecked Sendable {
    let core: SessionCore

    /// The configuration tasks are sent with.
    public var configuration: SessionConfiguration { core.configuration }
    /// The transport requests go through.
    public var transport: any Transport { core.transport }

    /// The reachability manager the app consults about this session's network (AFNetworking's
    /// `reachabilityManager`); ``ReachabilityManager/shared`` by default, not started: call
    /// ``ReachabilityManager/startMonitoring()`` to use it. The session itself never waits for reachability.
    public var reachabilityManager: ReachabilityManager {
        get { reachability.withLock { $0 } }
        set { reachability.withLock { $0 = newValue } }
    }
    private let reachability = Locked(ReachabilityManager.shared)

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - configuration: timeouts, headers, cookies, redirects.
    ///   - transport: ``NIOTransport`` by default on Linux, ``URLSessionTransport`` on Apple platforms.
    public init(configuration: SessionConfiguration = .default, transport: (any Transport)? = nil) {
        let tracing = RequestTracing.make(configuration.tracer)
        core = SessionCore(
            transport: transport ?? Self.defaultTransport(), configuration: configuration,
            monitors: configuration.eventMonitors + configuration.observabilityMonitors + (tracing.map { [$0] } ?? []),
            leadingInterceptor: tracing)
        core.owner.withLock { $0.manager = self }
    }

    deinit {
        core.invalidate(cancelingTasks: true)
    }

    /// The platform's default transport.
    public static func defaultTransport() -> any Transport {
        #if canImport(Darwin)
            return URLSessionTransport()
        #else
            return NIOTransport()
        #endif
    }

    // MARK: Settings

    /// The session-level hooks.
    public var hooks: SessionHooks {
        get { core.hooks }
        set { core.setHooks(newValue) }
    }

    /// Serializes responses of tasks created from now on; default ``JSONResponseSerializer``.
    public var responseSerializer: any ResponseSerializer {
        get { core.settings.withLock { $0.responseSerializer } }
        set { core.settings.withLock { $0.responseSerializer = newValue } }
    }

    /// Where completion handlers run; `nil` (the default) means the main queue.
    public var completionQueue: DispatchQueue? {
        get { core.settings.withLock { $0.completionQueue } }
        set { core.settings.withLock { $0.completionQueue = newValue } }
    }

    /// Where the callback API's task notifications are posted (`Notification.Name.taskDidResume`, `.taskDidSuspend`
    /// and `.taskDidComplete`): the main queue by default, as AFNetworking posts them, in the order the changes
    /// happened (on a serial queue). `nil` posts each at once on the thread where the change happens, before the
    /// task goes on, as the `async` calls' notifications always are (they never wait for the main queue). The
    /// download-move notifications and `.sessionDidInvalidate` are posted at once, as AFNetworking posts them.
    public var notificationQueue: DispatchQueue? {
        get { core.events.notificationQueue.withLock { $0 } }
        set { core.events.notificationQueue.withLock { $0 = newValue } }
    }

    /// The group completion handlers run in; `nil` (the default) means a private group shared by all managers.
    public var completionGroup: DispatchGroup? {
        get { core.settings.withLock { $0.completionGroup } }
        set { core.settings.withLock { $0.completionGroup = newValue } }
    }

    /// The policy every `https` server's certificate chain must pass (`securityPolicy`); ``SecurityPolicy/default``
    /// (the system's trust) by default. The same as ``securityPolicies``' default policy. Set it with
    /// ``setSecurityPolicy(_:)``; it applies to requests sent from then on.
    public var securityPolicy: SecurityPolicy {
        core.settings.withLock { $0.securityPolicies.defaultPolicy }
    }

    /// The security policy for each host, and whether hosts without one are refused; set it with
    /// ``setSecurityPolicies(_:)``.
    public var securityPolicies: SecurityPolicies {
        core.settings.withLock { $0.securityPolicies }
    }

    /// Sets the policy for hosts without their own (``securityPolicy``).
    ///
    /// - Throws: ``SecurityPolicyError/noPins(searched:)`` for a pinning policy that pins nothing (it would refuse
    ///   every server); ``HTTPSessionManager`` also refuses a pinning policy without an `https` base URL.
    open func setSecurityPolicy(_ policy: SecurityPolicy) throws {
        guard policy.pinsSomething else { throw SecurityPolicyError.noPins(searched: nil) }
        core.settings.withLock { $0.securityPolicies.defaultPolicy = policy }
    }

    /// Sets the whole per-host table (``securityPolicies``).
    ///
    /// - Throws: ``SecurityPolicyError/noPins(searched:)`` for a pinning policy that pins nothing (it would refuse
    ///   every server); ``HTTPSessionManager`` also refuses a pinning default policy without an `https` base URL.
    open func setSecurityPolicies(_ policies: SecurityPolicies) throws {
        guard policies.defaultPolicy.pinsSomething, policies.hostPolicies.values.allSatisfy(\.pinsSomething) else {
            throw SecurityPolicyError.noPins(searched: nil)
        }
        core.settings.withLock { $0.securityPolicies = policies }
    }

    // MARK: Tasks

    /// Every task not yet completed, in creation order.
    public var tasks: [SessionTask] { core.tasks }
    /// The data tasks among ``tasks`` (upload tasks included, as they are data tasks).
    public var dataTasks: [DataTask] { tasks.compactMap { $0 as? DataTask } }
    /// The upload tasks among ``tasks``.
    public var uploadTasks: [UploadTask] { tasks.compactMap { $0 as? UploadTask } }
    /// The download tasks among ``tasks``.
    public var downloadTasks: [DownloadTask] { tasks.compactMap { $0 as? DownloadTask } }

    /// A data task whose body is handed out as it arrives, through ``DataStreamTask/chunks``, instead of being
    /// collected (Alamofire's `DataStreamRequest`); not yet resumed. Its completion handler gets no object.
    public func dataStreamTask(
        with request: URLRequest, completionHandler: TaskCompletionHandler? = nil
    ) -> DataStreamTask {
        makeDataStreamTask(with: request, body: nil, completionHandler: completionHandler)
    }

    /// A streamed data task (see ``dataStreamTask(with:completionHandler:)``) that sends `body` as the request's
    /// body, pulled chunk by chunk as the connection takes it: an upload whose answer is read as it arrives. A body
    /// of unknown length is sent chunked; one that is not replayable follows a 307/308 redirect, answers a challenge
    /// or is sent again by a retrier only with a new body from ``SessionHooks/needNewBodyStream``.
    public func dataStreamTask(
        with request: URLRequest, body: HTTPRequestBody, completionHandler: TaskCompletionHandler? = nil
    ) -> DataStreamTask {
        makeDataStreamTask(with: request, body: body, completionHandler: completionHandler)
    }

    private func makeDataStreamTask(
        with request: URLRequest, body: HTTPRequestBody?, completionHandler: TaskCompletionHandler?
    ) -> DataStreamTask {
        let handoff = ChunkHandoff()
        let task = DataStreamTask(request: request, controller: core, handoff: handoff)
        let delegate = TaskDelegate(
            for: task, serializer: responseSerializer, uploadBody: body, completion: completionHandler,
            hopsToCompletionQueue: true, stream: handoff)
        core.register(task, delegate: delegate)
        return task
    }

    /// Sends `request` and returns as soon as the response head has arrived, with the body still to be read as it
    /// arrives.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - acceptableStatusCodes: other statuses throw
    ///     ``CourierError/unacceptableStatusCode(_:context:underlyingError:)`` with the first MiB of the body
    ///     attached; `nil` accepts every status.
    /// - Throws: ``CourierError`` when the request fails before its head arrives. Cancelling the calling Swift
    ///   task before then cancels the request; afterwards, stop iterating the body (or cancel the iterating task).
    ///   The task keeps its manager alive until the body has been read or abandoned.
    public func stream(
        _ request: URLRequest, acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
    ) async throws -> StreamedResponse {
        try await stream(request, uploading: nil, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// ``stream(_:acceptableStatusCodes:)`` for a request that sends `body`, streamed as the connection takes it
    /// (see ``dataStreamTask(with:body:completionHandler:)``); the call returns once the response head has arrived,
    /// which a server may send before it has read the whole body.
    public func stream(
        _ request: URLRequest, body: HTTPRequestBody, acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
    ) async throws -> StreamedResponse {
        try await stream(request, uploading: body, acceptableStatusCodes: acceptableStatusCodes)
    }

    private func stream(
        _ request: URLRequest, uploading body: HTTPRequestBody?, acceptableStatusCodes: IndexSet?
    ) async throws -> StreamedResponse {
        let task = makeDataStreamTask(with: request, body: body, completionHandler: nil)
        let head = try await withTaskCancellationHandler {
            task.resume()
            return try await task.response()
        } onCancel: {
            task.cancel()
        }
        let streamed = StreamedResponse(task: task, response: head)
        if let acceptableStatusCodes, !acceptableStatusCodes.contains(head.statusCode) {
            var body = Data()
            for try await chunk in streamed.chunks {
                body.append(chunk.prefix((1 << 20) - body.count))
                if body.count >= 1 << 20 { break }
            }
            task.cancel()
            throw CourierError.unacceptableStatusCode(
                head.statusCode, context: CourierError.Context(request: request, response: head, data: body),
                underlyingError: nil)
        }
        return streamed
    }

    /// The task's upload progress as it changes, starting with the current value; finishes when the task does.
    public func uploadProgressUpdates(for task: SessionTask) -> AsyncStream<TaskProgress> {
        progressUpdates(for: task, upload: true)
    }

    /// The task's download progress as it changes, starting with the current value; finishes when the task does.
    public func downloadProgressUpdates(for task: SessionTask) -> AsyncStream<TaskProgress> {
        progressUpdates(for: task, upload: false)
    }

    private func progressUpdates(for task: SessionTask, upload: Bool) -> AsyncStream<TaskProgress> {
        let delegate = core.delegate(for: task)
        return AsyncStream { continuation in
            guard let delegate else { return continuation.finish() }
            delegate.state.withLock { $0.addStream(continuation, upload: upload) }
        }
    }

    /// Every task's resume, suspend and completion, as they happen, until the manager has been invalidated and its
    /// last task has completed.
    public func events() -> AsyncStream<SessionEvent> {
        core.events.events()
    }

    /// Stops the manager: new tasks complete at once with a cancellation error, running tasks are cancelled when
    /// `cancelingTasks` is `true` and otherwise finish normally. Once the last task has completed, the
    /// ``SessionHooks/sessionDidBecomeInvalid`` hook runs, `Notification.Name.sessionDidInvalidate` is
    /// posted, monitors hear of it and ``events()`` ends.
    public func invalidate(cancelingTasks: Bool) {
        core.invalidate(cancelingTasks: cancelingTasks)
    }

    /// ``invalidate(cancelingTasks:)``, then waits until the last task has completed and the invalidation has been
    /// announced; every completion handler has then returned. The `async` calls' tasks need no queue for that; a
    /// callback task's handler runs on ``completionQueue`` (the main queue when `nil`), so with such tasks a program
    /// that never runs the main queue sets a queue of its own.
    public func invalidateAndWait(cancelingTasks: Bool) async {
        core.invalidate(cancelingTasks: cancelingTasks)
        await core.waitUntilInvalidated()
    }

    /// Empties the session's stores, as `URLSession.reset(completionHandler:)` does, and leaves the manager ready
    /// for new tasks: what an app gets from AFNetworking's `invalidateSessionCancelingTasks:resetSession:` when it
    /// goes on using the manager, e.g. after a sign-out.
    ///
    /// Removes every cookie of ``SessionConfiguration/cookieStore``, every response of
    /// ``SessionConfiguration/urlCache`` and every credential of ``SessionConfiguration/urlCredentialStorage``
    /// (whole stores: the process's own when they are the shared ones). With `cancelingTasks`, the running tasks
    /// are cancelled first and have completed when this returns; otherwise they go on, and a response that arrives
    /// afterwards may store cookies again. Open connections are kept: they carry no cookie or credential.
    public func reset(cancelingTasks: Bool = false) async {
        if cancelingTasks {
            // Listening before the snapshot: a task that completes in between is seen either way.
            let events = events()
            var running = Set(core.tasks.filter { $0.state != .completed }.map(ObjectIdentifier.init))
            core.tasks.forEach { $0.cancel() }
            if !running.isEmpty {
                for await case .didComplete(let task, _) in events {
                    running.remove(ObjectIdentifier(task))
                    if running.isEmpty { break }
                }
            }
        }
        let configuration = core.configuration
        configuration.cookieStore?.removeAllCookies()
        configuration.urlCache?.removeAllCachedResponses()
        if let storage = configuration.urlCredentialStorage {
            for (space, credentials) in storage.allCredentials {
                for credential in credentials.values { storage.remove(credential, for: space) }
            }
        }
    }
}
