import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The part of a session that running tasks hold on to: transport, configuration, settings, the task map and the
/// event sink.
///
/// Running tasks keep the core alive, never the ``SessionManager``; so releasing a manager with running tasks
/// really releases it, and its `deinit` cancels them. What a task goes through is in the extensions beside this
/// file: running it to its one completion (`SessionCore+Running`), its requests and what goes out (`TaskExchange`),
/// its timeouts and its download's file.
final class SessionCore: TaskController {
    struct Settings {
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var securityPolicies = SecurityPolicies()
    }

    struct Entry {
        let task: SessionTask
        let delegate: TaskDelegate
    }

    /// Invalidation: refused new tasks from ``invalidate(cancelingTasks:)`` on, announced once the last task is gone.
    struct Invalidation {
        var invalidated = false
        var announced = false
        /// Tasks completed whose outcome is still being handed out: the invalidation waits for them.
        var delivering = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let transport: any Transport
    /// The gate in front of the transport, when it asks for one (``Transport/maximumExchangesPerOrigin``).
    let admission: ExchangeAdmission?
    let configuration: SessionConfiguration
    let settings = Locked(Settings())
    let entries = Locked([Int: Entry]())
    /// Where every change of the session's tasks goes, once.
    let events: SessionEventSink
    /// The interceptor that adapts every request before the configuration's (the tracing's, which injects the
    /// trace context); `nil` without one.
    let leadingInterceptor: (any RequestInterceptor)?
    let invalidation = Locked(Invalidation())
    /// When each running task is next to be checked for a timeout, and whether the sweeper runs.
    let timeouts = Locked(TimeoutSchedule())
    /// ``SessionHooks/serverTrust``, wrapped for ``SecurityPolicy/serverTrustHook``.
    let serverTrustHook = Locked<ServerTrustHook?>(nil)
    /// The manager, the object of `Notification.Name.sessionDidInvalidate`.
    let owner = Locked(Owner())

    struct Owner {
        /// The ``SessionManager``, as the notification's object.
        weak var manager: (any AnyObject & Sendable)?
        /// The manager, held while a task that a resume started is unfinished (as a URLSession holds its delegate),
        /// so that a manager made for one callback call and released at once (AFNetworking's
        /// `[[AFHTTPSessionManager manager] GET:…]`) still completes it; released with the last such task, so an
        /// idle manager is freed.
        var keptAlive: (any AnyObject & Sendable)?
        /// The unfinished tasks a resume started.
        var running = Set<ObjectIdentifier>()
    }

    /// Completion handlers without a completion group use this one (`url_session_manager_completion_group`).
    static let defaultCompletionGroup = DispatchGroup()

    /// A core for `configuration`: `monitors` are every event monitor of the session (the configuration's and its
    /// features'), `leadingInterceptor` adapts and retries before the configuration's interceptor.
    init(
        transport: any Transport, configuration: SessionConfiguration, monitors: [any EventMonitor],
        leadingInterceptor: (any RequestInterceptor)?
    ) {
        self.transport = transport
        admission = transport.maximumExchangesPerOrigin.map(ExchangeAdmission.init(limit:))
        self.configuration = configuration
        self.leadingInterceptor = leadingInterceptor
        events = SessionEventSink(monitors: monitors)
    }

    /// The session's hooks, as of this call.
    var hooks: SessionHooks { hookSnapshot.hooks }

    /// The session's hooks as of this call, by reference: what a task keeps, instead of a copy of every hook.
    var hookSnapshot: SessionEventSink.HookSnapshot { events.hooks.value }

    /// Replaces the hooks; a server-trust hook is wrapped once here, so that every request carries the same one.
    func setHooks(_ hooks: SessionHooks) {
        events.hooks.withLock { $0 = SessionEventSink.HookSnapshot(hooks) }
        serverTrustHook.withLock { $0 = hooks.serverTrust.map(ServerTrustHook.init) }
    }

    /// The policy a request to `url` must pass: the session's for its host, decided by the server-trust hook when
    /// there is one.
    func securityPolicy(for url: URL) throws -> SecurityPolicy {
        guard URLCheck.isHTTPS(url) else { return .default }  // as the table would answer, without copying it
        var policy = try settings.withLock { $0.securityPolicies }.policy(for: url)
        if let hook = serverTrustHook.value { policy.serverTrustHook = hook }
        return policy
    }

    var isInvalidated: Bool { invalidation.withLock { $0.invalidated } }

    // MARK: Registry

    /// Adds the task to the map; on an invalidated session it completes at once with a cancellation error.
    func register(_ task: SessionTask, delegate: TaskDelegate) {
        entries.withLock { $0[task.taskIdentifier] = Entry(task: task, delegate: delegate) }
        events.send(.created(task), of: delegate)
        if isInvalidated {
            let cancelled = CourierError.cancelled(context: .init(request: task.originalRequest))
            complete(task, delegate: delegate, with: .failed(cancelled))
        }
    }

    func delegate(for task: SessionTask) -> TaskDelegate? {
        entries.withLock { $0[task.taskIdentifier]?.delegate }
    }

    var tasks: [SessionTask] {
        entries.withLock { $0.values.map(\.task) }.sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    /// Takes a completed task out of the map; its outcome is being delivered until ``delivered(_:)``.
    func unregister(_ task: SessionTask) {
        invalidation.withLock { $0.delivering += 1 }
        entries.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        disarmTimeouts(of: task)
    }

    /// Notes that a completed task's outcome has been handed out, and announces the invalidation it may complete.
    func delivered(_ task: SessionTask) {
        invalidation.withLock { $0.delivering -= 1 }
        announceInvalidationIfDone()
        // Released outside the lock: the manager's last release invalidates the session, which takes it again.
        let released = owner.withLock { owner -> AnyObject? in
            guard owner.running.remove(ObjectIdentifier(task)) != nil, owner.running.isEmpty else { return nil }
            defer { owner.keptAlive = nil }
            return owner.keptAlive
        }
        withExtendedLifetime(released) {}
    }

    // MARK: TaskController

    func start(_ task: SessionTask) {
        // A connection task runs when its feature opens it (`ConnectionTask.open`).
        guard task.runsWhenResumed, let delegate = delegate(for: task) else { return }
        owner.withLock { owner in
            if owner.running.isEmpty { owner.keptAlive = owner.manager }
            owner.running.insert(ObjectIdentifier(task))
        }
        armTimeouts(for: task, delegate: delegate)
        let runner = Task { await self.run(task, delegate: delegate) }
        task.attachRunner { runner.cancel() }
    }

    func wantResumeData(for task: SessionTask, handler: @escaping @Sendable (Data?) -> Void) -> Bool {
        delegate(for: task)?.downloadFile?.wantResumeData(handler) ?? false
    }

    func cancelBeforeStart(_ task: SessionTask) {
        guard let delegate = delegate(for: task) else { return }
        complete(
            task, delegate: delegate,
            with: .failed(CourierError.cancelled(context: context(for: task, delegate: delegate))))
    }

    func taskDidChangeState(_ task: SessionTask, to state: SessionTask.State) {
        let delegate = delegate(for: task)
        switch state {
        case .running:
            delegate?.touch()
            events.send(.resumed(task), of: delegate)
        case .suspended:
            events.send(.suspended(task), of: delegate)
        case .canceling:
            events.send(.cancelled(task), of: delegate)
        case .completed:
            break
        }
    }

    // MARK: Invalidation

    /// Cancels every task (if asked) and refuses new ones; the invalidation is announced once the last task has
    /// completed.
    func invalidate(cancelingTasks: Bool) {
        invalidation.withLock { $0.invalidated = true }
        if cancelingTasks { tasks.forEach { $0.cancel() } }
        announceInvalidationIfDone()
    }

    /// Waits until the session is invalidated and its last task has completed.
    func waitUntilInvalidated() async {
        await withCheckedContinuation { continuation in
            let done = invalidation.withLock { state -> Bool in
                if state.announced { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func announceInvalidationIfDone() {
        let waiters = invalidation.withLock { state -> [CheckedContinuation<Void, Never>]? in
            guard state.invalidated, !state.announced, state.delivering == 0, entries.withLock({ $0.isEmpty }) else {
                return nil
            }
            state.announced = true
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return }
        events.send(.invalidated(owner.withLock { $0.manager }), of: nil)
        waiters.forEach { $0.resume() }
    }
}
