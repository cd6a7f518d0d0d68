import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The part of a session that running tasks hold on to: transport, configuration, settings, the task map.
///
/// Running tasks keep the core alive, never the ``SessionManager``; so releasing a manager with running tasks
/// really releases it, and its `deinit` cancels them.
final class SessionCore: TaskController {
    struct Settings {
        var hooks = SessionHooks()
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var securityPolicies = SecurityPolicies()
    }

    struct Entry {
        let task: SessionTask
        let delegate: TaskDelegate
    }

    let transport: any Transport
    let configuration: SessionConfiguration
    let settings = Locked(Settings())
    let entries = Locked([Int: Entry]())
    let eventContinuations = Locked([UUID: AsyncStream<SessionEvent>.Continuation]())
    let invalidated = Locked(false)
    let sweeperRunning = Locked(false)

    /// Completion handlers without a completion group use this one (`url_session_manager_completion_group`).
    static let defaultCompletionGroup = DispatchGroup()

    init(transport: any Transport, configuration: SessionConfiguration) {
        self.transport = transport
        self.configuration = configuration
    }

    // MARK: Registry

    /// Adds the task to the map; on an invalidated session it completes at once with a cancellation error.
    func register(_ task: SessionTask, delegate: TaskDelegate) {
        entries.withLock { $0[task.taskIdentifier] = Entry(task: task, delegate: delegate) }
        if invalidated.value {
            finish(
                task, delegate: delegate, error: CourierError.cancelled(context: .init(request: task.originalRequest)))
        }
    }

    func delegate(for task: SessionTask) -> TaskDelegate? {
        entries.withLock { $0[task.taskIdentifier]?.delegate }
    }

    var tasks: [SessionTask] {
        entries.withLock { $0.values.map(\.task) }.sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    // MARK: TaskController

    func start(_ task: SessionTask) {
        guard let delegate = delegate(for: task) else { return }
        armTimeouts(for: task, delegate: delegate)
        let runner = Task { await self.run(task, delegate: delegate) }
        task.attachRunner { runner.cancel() }
    }

    func wantResumeData(for task: SessionTask, handler: @escaping @Sendable (Data?) -> Void) -> Bool {
        delegate(for: task)?.wantResumeData(handler) ?? false
    }

    func cancelBeforeStart(_ task: SessionTask) {
        guard let delegate = delegate(for: task) else { return }
        finish(task, delegate: delegate, error: CourierError.cancelled(context: context(for: task, delegate: delegate)))
    }

    func taskDidChangeState(_ task: SessionTask, to state: SessionTask.State) {
        switch state {
        case .running:
            delegate(for: task)?.touch()
            announceResume(of: task)
        case .suspended:
            post(.taskDidSuspend, task: task, userInfo: nil)
            emit(.didSuspend(task))
        case .canceling, .completed:
            break
        }
    }

    private func announceResume(of task: SessionTask) {
        post(.taskDidResume, task: task, userInfo: nil)
        emit(.didResume(task))
    }

    // MARK: Running

    private func run(_ task: SessionTask, delegate: TaskDelegate) async {
        do {
            try await perform(task, delegate: delegate, collect: false)
            finish(task, delegate: delegate, error: nil)
        } catch {
            finish(task, delegate: delegate, error: courierError(error, task: task, delegate: delegate))
        }
    }

    /// Runs a task for the `async` API and returns the typed result: one runner task, serialization in it with the
    /// concrete serializer, and no completion handler, queue hop or type-erased cast. The task still goes through
    /// the session's map, hooks, timeouts, notifications and events like any other.
    ///
    /// - Parameter early: the exchange ``startEarly(_:delegate:)`` started for the task, if it did.
    func runTyped<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer, early: CollectedResponse? = nil
    ) async throws -> (Serializer.SerializedObject, Data) {
        if early != nil || collects(task, delegate: delegate, hooks: settings.withLock { $0.hooks }) {
            // The exchange can be aborted from outside (timeouts, `cancel()`), so the caller's own task runs it: no
            // runner task and no hop to one.
            task.attachRunner { delegate.exchange.cancel() }
            return try await withTaskCancellationHandler {
                try await runTypedBody(task, delegate: delegate, serializer: serializer, collect: true, early: early)
            } onCancel: {
                task.cancel()
            }
        }
        let runner = Task {
            try await self.runTypedBody(task, delegate: delegate, serializer: serializer, collect: false)
        }
        task.attachRunner { runner.cancel() }
        return try await withTaskCancellationHandler {
            try await runner.value
        } onCancel: {
            runner.cancel()
            task.cancel()
        }
    }

    private func runTypedBody<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer, collect: Bool,
        early: CollectedResponse? = nil
    ) async throws -> (Serializer.SerializedObject, Data) {
        let started = task.mutable.withLock { state -> Bool in
            guard state.state == .suspended, !state.started else { return false }
            state.state = .running
            state.started = true
            return true
        }
        guard started else {
            if early != nil { delegate.exchange.cancel() }
            throw CourierError.cancelled(context: CourierError.Context(request: task.originalRequest))
        }
        announceResume(of: task)  // armTimeouts notes the activity
        armTimeouts(for: task, delegate: delegate)
        var failure: (any Error)?
        do {
            try await perform(task, delegate: delegate, collect: collect, early: early)
        } catch {
            failure = courierError(error, task: task, delegate: delegate)
        }
        var outcome: Result<(Serializer.SerializedObject, Data), any Error>
        if let failure {
            outcome = .failure(failure)
        } else {
            let data = delegate.receivedData
            do {
                outcome = .success((try serialize(data, of: task, with: serializer), data))
            } catch {
                outcome = .failure(attachingRequest(of: task, to: error))
            }
        }
        if markCompleted(task, error: failure) {
            delegate.finishProgress(succeeded: failure == nil)
            let (object, error): ((any Sendable)?, (any Error)?)
            switch outcome {
            case .success(let value): (object, error) = (value.0, nil)
            case .failure(let failure): (object, error) = (nil, failure)
            }
            var info = Self.completionInfo(serializer: serializer, object: object, error: error, room: 1)
            info[SessionNotificationKey.responseData] = delegate.receivedData
            announceCompletion(of: task, info: info, object: object, error: error)
        }
        return try outcome.get()
    }

    /// The request loop: cookies, the transport, redirects, authentication, then the body. With `collect`, the
    /// transport gathers each body whole (see ``collects(_:delegate:hooks:)``); with `early`, the first exchange
    /// is already under way.
    private func perform(
        _ task: SessionTask, delegate: TaskDelegate, collect: Bool, early: CollectedResponse? = nil
    ) async throws {
        var early = early
        defer {
            if early != nil { delegate.exchange.cancel() }  // started but never awaited: nobody wants it
        }
        guard var request = task.originalRequest, request.url != nil else {
            throw CourierError.invalidURL(task.originalRequest?.url?.absoluteString ?? "")
        }
        var body: RequestBody? = delegate.uploadBody ?? request.httpBody.map { .data($0) }
        var visited: Set<String> = []
        var redirects = 0
        var authenticationAttempts = 0
        let (hooks, securityPolicies) = settings.withLock { ($0.hooks, $0.securityPolicies) }
        var cachePlan = cachePlan(for: request, task: task, delegate: delegate)
        var addedConditions: [String] = []
        switch cachePlan {
        case .cached(let cached):
            try deliverCached(cached, task: task, delegate: delegate, hooks: hooks)
            return
        case .miss:
            throw CourierError.requestFailed(
                underlyingError: ResourceNotCachedError(url: request.url),
                context: CourierError.Context(request: request))
        case .revalidate(_, let conditions):
            for (name, value) in conditions where request.value(forHTTPHeaderField: name) == nil {
                request.setValue(value, forHTTPHeaderField: name)
                addedConditions.append(name)
            }
        case .network:
            break
        }
        while true {
            try checkCancellation(task, delegate: delegate)
            guard let url = request.url else { throw CourierError.invalidURL("") }
            task.mutable.withLock { $0.currentRequest = request }
            let response: TransportResponse
            if let started = early {
                early = nil
                delegate.expectUpload(total: -1)  // what makeTransportRequest notes for a request without a body
                response = try await started.response()
            } else {
                try URLCheck.validate(url, allowsUnixSockets: configuration.allowsUnixSocketURLs, request: request)
                var outgoing = makeTransportRequest(
                    request, url: url, body: body, task: task, delegate: delegate, hooks: hooks)
                outgoing.securityPolicy = try securityPolicies.policy(for: url)
                delegate.touch()
                response =
                    if collect {
                        try await transport.collect(
                            outgoing, cancellation: delegate.exchange, activity: { delegate.touch() })
                    } else {
                        try await transport.send(outgoing)
                    }
            }
            delegate.touch()
            let head = ResponseHead(response)
            task.mutable.withLock { $0.response = head }
            storeCookies(from: response, for: request, url: url)
            // Foundation's form of the head, made only on the paths that hand it out or read more than the status.
            func http() throws -> HTTPURLResponse {
                guard let http = head.response else {
                    throw CourierError.badServerResponse(
                        reason: "the response head could not be read", underlyingError: nil,
                        context: CourierError.Context())
                }
                return http
            }

            if RedirectPolicy.statusCodes.contains(head.statusCode),
                let redirect = RedirectPolicy.nextRequest(
                    after: request, response: try http(),
                    alsoRemoving: configuration.headersRemovedOnCrossOriginRedirect),
                redirect.keepsBody == false || body?.isReplayable ?? true
            {
                redirects += 1
                if redirects > configuration.maximumRedirects { throw tooManyRedirects(task, try http()) }
                let proposed =
                    try hooks.willPerformRedirection.map { $0(task, try http(), redirect.request) } ?? redirect.request
                if var next = proposed {
                    try checkRedirect(from: request, to: next)
                    if case .revalidate = cachePlan {
                        // The stored validators belong to the first URL, not to where the redirect leads.
                        for name in addedConditions { next.setValue(nil, forHTTPHeaderField: name) }
                        cachePlan = .network(store: true)
                    }
                    // Every request sent so far had the key of one that redirected (a retry after a challenge or a
                    // 416 repeats its key), so keys are collected here rather than before each send.
                    visited.insert("\(request.httpMethod ?? "GET") \(url.absoluteString)")
                    let key = "\(next.httpMethod ?? "GET") \(next.url?.absoluteString ?? "")"
                    if visited.contains(key) { throw tooManyRedirects(task, try http()) }
                    if !redirect.keepsBody {
                        body = nil
                    } else if next.httpBody != redirect.request.httpBody {
                        body = next.httpBody.map { .data($0) }  // the hook replaced the body
                    }
                    await discard(response.body)
                    request = next
                    continue
                }
            }

            if head.statusCode == 401, body?.isReplayable ?? true,
                let challenge = try Authentication.challenge(
                    in: head.headers, response: try http(), previousFailureCount: authenticationAttempts,
                    preferring: configuration.credential?.schemes ?? Credential.Scheme.all)
            {
                let disposition = hooks.authenticationChallenge?(task, challenge) ?? .performDefaultHandling
                var credential: Credential?
                switch disposition {
                case .useCredential(let chosen): credential = chosen
                case .performDefaultHandling:
                    // The session's credential answers only its own schemes, at the origin the task was made for
                    // (or the protection space it names): never a Basic downgrade, another host, or plain http.
                    credential = configuration.credential.flatMap { configured in
                        authenticationAttempts == 0
                            && configured.answers(challenge, at: url, originalURL: task.originalRequest?.url)
                            ? configured : nil
                    }
                case .rejectProtectionSpace: credential = nil
                case .cancelAuthenticationChallenge: throw CancellationError()
                }
                if let credential {
                    authenticationAttempts += 1
                    request.setValue(
                        Authentication.authorization(
                            for: challenge, credential: credential, method: request.httpMethod ?? "GET", url: url),
                        forHTTPHeaderField: "Authorization")
                    await discard(response.body)
                    continue
                }
            }

            if case .revalidate(let cached, _) = cachePlan, head.statusCode == 304 {
                await discard(response.body)
                try deliverCached(cached, task: task, delegate: delegate, hooks: hooks)
                return
            }

            let resumeOffset = delegate.state.withLock { $0.resumeOffset }
            if resumeOffset > 0 {
                switch ResumeDecision(response: try http(), offset: resumeOffset) {
                case .append:
                    break
                case .restart:
                    try await delegate.restartDownloadFile()
                case .retryWholeResource:
                    // 416: the partial file does not fit the resource any more; ask for all of it once.
                    try await delegate.restartDownloadFile()
                    request.setValue(nil, forHTTPHeaderField: "Range")
                    request.setValue(nil, forHTTPHeaderField: "If-Range")
                    await discard(response.body)
                    continue
                }
            }

            switch try hooks.didReceiveResponse.map({ $0(task, try http()) }) ?? .allow {
            case .allow: break
            case .cancel: throw CancellationError()
            case .becomeDownload: if !delegate.isDownload { try delegate.beginDownloadFile() }
            }
            let length = head.contentLength
            let alreadyThere = delegate.state.withLock { $0.resumeOffset }
            // A server's `Content-Length` may be anything up to 2^63 − 1: an offset plus it must not trap.
            let expected = length >= 0 ? CheckedConversion.sum(alreadyThere, length) ?? -1 : -1
            delegate.expectDownload(total: request.httpMethod?.uppercased() == "HEAD" ? 0 : expected)
            task.mutable.withLock { $0.bytesExpectedToReceive = expected }
            if let stream = delegate.stream { stream.deliver(head: try http()) }
            try await readBody(response.body, task: task, delegate: delegate, hooks: hooks)
            switch cachePlan {
            case .network(store: true), .revalidate:
                store(try http(), for: request, task: task, delegate: delegate, hooks: hooks)
            default: break
            }
            return
        }
    }

    // MARK: Caching

    /// What the cache can do for this task: only `GET` data tasks whose body is collected take part.
    private func cachePlan(for request: URLRequest, task: SessionTask, delegate: TaskDelegate) -> HTTPCaching.Plan {
        guard let cache = configuration.urlCache, task is DataTask, delegate.stream == nil, delegate.uploadBody == nil,
            !delegate.isDownload
        else { return .network(store: false) }
        let policy =
            request.cachePolicy != .useProtocolCachePolicy ? request.cachePolicy : configuration.requestCachePolicy
        return HTTPCaching.plan(for: request, policy: policy, cache: cache)
    }

    /// Completes the exchange with a stored response, as if it had just arrived.
    private func deliverCached(
        _ cached: CachedURLResponse, task: SessionTask, delegate: TaskDelegate, hooks: SessionHooks
    ) throws {
        let response = cached.response as? HTTPURLResponse
        task.mutable.withLock { state in
            state.response = response.map(ResponseHead.init)
            state.bytesExpectedToReceive = Int64(cached.data.count)
            state.bytesReceived = Int64(cached.data.count)
        }
        delegate.expectDownload(total: Int64(cached.data.count))
        delegate.didReceiveInMemory(cached.data)
        hooks.didReceiveData?(task, cached.data)
    }

    /// Stores a complete response when the rules allow it and the will-cache hook does not veto it.
    private func store(
        _ response: HTTPURLResponse, for request: URLRequest, task: SessionTask, delegate: TaskDelegate,
        hooks: SessionHooks
    ) {
        guard let cache = configuration.urlCache, let dataTask = task as? DataTask,
            HTTPCaching.isStorable(response, for: request)
        else { return }
        let proposed = CachedURLResponse(response: response, data: delegate.receivedData, storagePolicy: .allowed)
        guard let chosen = hooks.willCacheResponse.map({ $0(dataTask, proposed) }) ?? proposed else { return }
        cache.storeCachedResponse(chosen, for: request)
    }

    private func readBody(
        _ body: DataChunks, task: SessionTask, delegate: TaskDelegate, hooks: SessionHooks
    ) async throws {
        if let whole = body.whole {
            // Already in memory (a gathered body): one delivery, no iteration.
            await task.waitWhileSuspended()
            try checkCancellation(task, delegate: delegate)
            if !whole.isEmpty { try await deliver(whole, task: task, delegate: delegate, hooks: hooks) }
            return
        }
        var iterator = body.makeAsyncIterator()
        while true {
            await task.waitWhileSuspended()
            try checkCancellation(task, delegate: delegate)
            guard let chunk = try await iterator.next() else { break }
            try await deliver(chunk, task: task, delegate: delegate, hooks: hooks)
        }
    }

    /// Hands one chunk of the body to the delegate, the did-receive-data hook and a streaming consumer.
    private func deliver(_ chunk: Data, task: SessionTask, delegate: TaskDelegate, hooks: SessionHooks)
        async throws
    {
        try await delegate.didReceive(chunk)
        task.mutable.withLock { $0.bytesReceived += Int64(chunk.count) }
        hooks.didReceiveData?(task, chunk)
        if let stream = delegate.stream {
            delegate.state.withLock { $0.waitingForConsumer = true }
            defer {
                delegate.state.withLock { state in
                    state.waitingForConsumer = false
                    state.lastActivity = .now  // the idle clock starts again when the consumer is back
                }
            }
            try await stream.send(chunk)
        }
    }

    /// Starts a plain request's exchange before its task is set up, so that the task's bookkeeping overlaps the
    /// request's way out; `nil` when the session would not collect its body anyway (see
    /// ``collects(_:delegate:hooks:)``), when it needs the cache, or when the transport cannot start at once. The
    /// request goes out exactly as ``makeTransportRequest(_:url:body:task:delegate:hooks:)`` would send it; any
    /// error is left to the normal path to report.
    ///
    /// The caller must hand the result to ``runTyped(_:delegate:serializer:early:)`` with `delegate`.
    func startEarly(_ plain: PlainRequest, delegate: TaskDelegate) -> CollectedResponse? {
        guard configuration.urlCache == nil,
            URLCheck.hasWebScheme(plain.url),  // the serializer checked the host and port
            !plain.headerFields.keys.contains(where: { $0.caseInsensitiveEquals("Content-Length") }),
            !invalidated.value
        else { return nil }
        let (hooks, policies) = settings.withLock { ($0.hooks, $0.securityPolicies) }
        guard !Self.watchesExchanges(hooks), let policy = try? policies.policy(for: plain.url)
        else { return nil }
        var outgoing = TransportRequest(
            method: plain.method.uppercased(), url: plain.url,
            headers: transportHeaders(plain.headerFields, url: plain.url, handlesCookies: plain.handlesCookies))
        outgoing.securityPolicy = policy
        return try? transport.startCollecting(
            outgoing, cancellation: delegate.exchange, activity: { delegate.touch() })
    }

    /// The header fields a request goes out with: its own (sorted by name, since Foundation hands them out in no
    /// order), the configuration's additional ones it lacks and the cookies stored for `url`; never a framing field.
    private func transportHeaders(_ fields: [String: String], url: URL, handlesCookies: Bool) -> HTTPHeaders {
        var headers = HTTPHeaders(
            fields.sorted(by: { $0.key < $1.key }).map { HTTPHeaders.Field(name: $0.key, value: $0.value) })
        for field in configuration.httpAdditionalHeaders where headers[field.name] == nil {
            headers[field.name] = field.value
        }
        if configuration.httpShouldSetCookies, handlesCookies, headers["Cookie"] == nil,
            let storage = configuration.httpCookieStorage, let cookies = storage.cookies(for: url), !cookies.isEmpty
        {
            for (name, value) in HTTPCookie.requestHeaderFields(with: cookies) { headers[name] = value }
        }
        headers["Content-Length"] = nil
        headers["Transfer-Encoding"] = nil
        return headers
    }

    private func makeTransportRequest(
        _ request: URLRequest, url: URL, body: RequestBody?, task: SessionTask, delegate: TaskDelegate,
        hooks: SessionHooks
    ) -> TransportRequest {
        let fields = request.allHTTPHeaderFields ?? [:]
        let declaredLength = fields.first(where: { $0.key.caseInsensitiveEquals("Content-Length") })?.value
        let headers = transportHeaders(fields, url: url, handlesCookies: request.httpShouldHandleCookies)
        let total = body?.length ?? declaredLength.flatMap { Int64($0) } ?? -1
        delegate.expectUpload(total: total)
        task.mutable.withLock { $0.bytesExpectedToSend = total }
        let method = (request.httpMethod ?? "GET").uppercased()
        guard body != nil else { return TransportRequest(method: method, url: url, headers: headers) }
        let sent = Locked(Int64(0))
        return TransportRequest(
            method: method, url: url, headers: headers, body: body,
            bodyProgress: { [weak task] totalSent in
                guard let task else { return }
                let step = sent.withLock { previous -> Int64 in
                    defer { previous = totalSent }
                    return totalSent - previous
                }
                guard step > 0 else { return }
                task.mutable.withLock { $0.bytesSent = totalSent }
                delegate.didSend(totalBytesSent: totalSent)
                hooks.didSendBodyData?(task, step, totalSent, total)
            })
    }

    private func storeCookies(from response: TransportResponse, for request: URLRequest, url: URL) {
        guard configuration.httpShouldSetCookies, request.httpShouldHandleCookies,
            let storage = configuration.httpCookieStorage
        else { return }
        for value in response.headers.values(for: "Set-Cookie") {
            let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": value], for: url)
            storage.setCookies(cookies, for: url, mainDocumentURL: nil)
        }
    }

    /// Reads and drops a body that is not delivered (a followed redirect, an answered challenge), so the connection
    /// can be reused; stops after 1 MiB and lets the transport close the connection instead.
    private func discard(_ body: DataChunks) async {
        var iterator = body.makeAsyncIterator()
        var remaining = 1 << 20
        while remaining > 0, let chunk = try? await iterator.next() { remaining -= chunk.count }
    }

    private func checkCancellation(_ task: SessionTask, delegate: TaskDelegate) throws {
        if Task.isCancelled || task.isCancelling || delegate.exchange.isCancelled { throw CancellationError() }
    }

    /// Whether an `async` call's exchanges are collected whole by the transport
    /// (``Transport/collect(_:cancellation:activity:)``): a data
    /// task with a small in-memory body or none, whose head and chunks nobody watches (no stream, download, progress
    /// closures or per-chunk hooks). The caller awaits the whole value anyway, so
    /// nothing is lost but what a task's observers could see mid-body: ``SessionTask/countOfBytesReceived`` moves
    /// once, at the end, and ``SessionTask/suspend()`` does not pause such a body. Tasks made by the factories and
    /// the callback methods always stream.
    private func collects(_ task: SessionTask, delegate: TaskDelegate, hooks: SessionHooks) -> Bool {
        guard task is DataTask, delegate.stream == nil,
            delegate.uploadProgressHandler == nil, delegate.downloadProgressHandler == nil,
            !Self.watchesExchanges(hooks), !delegate.isDownload
        else { return false }
        guard let body = delegate.uploadBody ?? task.originalRequest?.httpBody.map({ .data($0) }) else { return true }
        return (body.data?.count ?? .max) <= Self.largestCollectedUpload
    }

    /// Whether a hook watches an exchange as it goes (its head, its body's chunks, its upload's progress), which a
    /// collected exchange could not show it.
    private static func watchesExchanges(_ hooks: SessionHooks) -> Bool {
        hooks.didReceiveResponse != nil || hooks.didReceiveData != nil || hooks.didSendBodyData != nil
    }

    /// Larger bodies are streamed, with progress as they go.
    static let largestCollectedUpload = 64 * 1024

    /// Throws unless the session may follow a redirect from `request` to `next` (whether the automatic policy or a
    /// hook proposed it): `http` or `https` only, and no step down from `https` to `http` unless the configuration
    /// allows it. The host and port are checked before the next request is sent, as every request's are.
    private func checkRedirect(from request: URLRequest, to next: URLRequest) throws {
        guard let target = next.url else { throw CourierError.invalidURL("") }
        guard URLCheck.hasWebScheme(target) else {
            throw CourierError.unsupportedURL(
                target, reason: "a redirect may lead only to http or https",
                context: CourierError.Context(request: request))
        }
        if let current = request.url, RedirectPolicy.isDowngrade(from: current, to: target),
            !configuration.allowsInsecureRedirects
        {
            throw CourierError.insecureRedirect(
                from: current, to: target, context: CourierError.Context(request: request))
        }
    }

    private func tooManyRedirects(_ task: SessionTask, _ response: HTTPURLResponse) -> CourierError {
        .tooManyRedirects(context: CourierError.Context(request: task.currentRequest, response: response))
    }

    // MARK: Timeouts

    /// Arms the task's timeouts and makes sure the sweeper that enforces them is running.
    private func armTimeouts(for task: SessionTask, delegate: TaskDelegate) {
        let requestTimeout = task.originalRequest.map(requestTimeout(for:)) ?? configuration.timeoutIntervalForRequest
        delegate.state.withLock { state in
            state.lastActivity = .now
            state.idleTimeout = CheckedConversion.duration(requestTimeout)
            state.resourceDeadline = .now + CheckedConversion.duration(configuration.timeoutIntervalForResource)
        }
        let startSweeper = sweeperRunning.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        if startSweeper { Task { await self.sweepTimeouts() } }
    }

    /// One loop per session, instead of a timer per task: it wakes at the nearest deadline (at least every
    /// 250 ms), cancels the runners of tasks that waited too long for bytes or ran out of time, and stops when no
    /// task is left. A suspended task does not time out while it is suspended.
    private func sweepTimeouts() async {
        while true {
            let now = ContinuousClock.now
            var nearest = now + .milliseconds(250)
            let running = entries.withLock { entries in entries.values.filter { $0.task.state != .completed } }
            if running.isEmpty {
                let stop = sweeperRunning.withLock { running -> Bool in
                    // A task registered since the snapshot keeps the sweeper alive.
                    let idle = entries.withLock { $0.isEmpty }
                    if idle { running = false }
                    return idle
                }
                if stop { return }
            }
            for entry in running {
                let suspended = entry.task.state == .suspended
                let expired = entry.delegate.state.withLock { state -> Bool in
                    guard let idle = state.idleTimeout, let resourceDeadline = state.resourceDeadline else {
                        return false
                    }
                    if suspended || state.waitingForConsumer { state.lastActivity = now }
                    let deadline = min(state.lastActivity + idle, resourceDeadline)
                    if now >= deadline {
                        state.timedOut = true
                        return true
                    }
                    nearest = min(nearest, deadline)
                    return false
                }
                if expired { entry.task.cancelExecution() }
            }
            try? await Task.sleep(until: nearest, clock: .continuous)
        }
    }

    /// A request's own timeout when it was changed from `URLRequest`'s default, else the configuration's.
    private func requestTimeout(for request: URLRequest) -> TimeInterval {
        request.timeoutInterval != Self.defaultRequestTimeout
            ? request.timeoutInterval : configuration.timeoutIntervalForRequest
    }

    private static let defaultRequestTimeout: TimeInterval = {
        guard let url = URL(string: "http://localhost") else { return 60 }
        return URLRequest(url: url).timeoutInterval
    }()

    // MARK: Completion

    private func context(for task: SessionTask, delegate: TaskDelegate) -> CourierError.Context {
        CourierError.Context(
            request: task.currentRequest, response: task.response,
            data: delegate.isDownload ? nil : delegate.receivedData)
    }

    private func courierError(_ error: any Error, task: SessionTask, delegate: TaskDelegate) -> CourierError {
        let context = context(for: task, delegate: delegate)
        if delegate.state.withLock({ $0.timedOut }) { return .timedOut(context: context) }
        if error is CancellationError { return .cancelled(context: context) }
        guard let courier = error as? CourierError else {
            if error is FileChangedError {
                return .fileOperationFailed(
                    reason: String(describing: error), underlyingError: error, context: context)
            }
            return .requestFailed(underlyingError: error, context: context)
        }
        return courier.withContext { existing in
            if existing.request == nil { existing.request = context.request }
            if existing.response == nil { existing.response = context.response }
            if existing.data == nil { existing.data = context.data }
        }
    }

    /// Completes the task exactly once: hooks, serialization (in the runner, off the transport's threads), the
    /// completion handler on the completion queue inside the completion group, then the notification and the event.
    func finish(_ task: SessionTask, delegate: TaskDelegate, error: (any Error)?) {
        guard let settings = markFinished(task, error: error) else { return }
        let response = task.response
        let queue = delegate.completionQueue
        let group = settings.completionGroup ?? Self.defaultCompletionGroup

        delegate.stream?.finish(error)
        let deliver: Delivery = { object, failure, info, afterward in
            delegate.finishProgress(succeeded: failure == nil)
            let complete: @Sendable () -> Void = {
                delegate.completion?(response, object, failure)
                self.announceCompletion(
                    of: task, serializer: delegate.serializer, userInfo: info, object: object, error: failure)
                afterward?()
            }
            if let queue {
                queue.async(group: group, execute: complete)
            } else {
                complete()
            }
        }

        if let error {
            let isDownload = delegate.isDownload
            delegate.abandonDownloadFile(request: task.currentRequest, response: response)
            deliver(nil, error, isDownload ? [:] : [SessionNotificationKey.responseData: delegate.receivedData], nil)
            return
        }
        delegate.dropResumeDataRequest()
        if delegate.stream != nil {
            deliver(nil, nil, [:], nil)
            return
        }
        // Serialization runs here, in the task's runner on Swift's concurrent pool: off the transport's threads,
        // as AFNetworking's processing queue is, without a second thread hop.
        if let temporaryURL = delegate.finishDownloadFile() {
            finishDownload(task, delegate: delegate, temporaryURL: temporaryURL, settings: settings, deliver: deliver)
            return
        }
        let data = delegate.receivedData
        do {
            let object = try serialize(data, of: task, with: delegate.serializer)
            deliver(object, nil, [SessionNotificationKey.responseData: data], nil)
        } catch {
            deliver(nil, attachingRequest(of: task, to: error), [SessionNotificationKey.responseData: data], nil)
        }
    }

    /// Serializes a body, making Foundation's `HTTPURLResponse` only when the serializer needs one: a
    /// ``BodyOnlySerializer`` given a response it accepts parses the body alone. Any failure serializes again with
    /// the response, so errors carry the same context either way.
    private func serialize<Serializer: ResponseSerializer>(
        _ data: Data, of task: SessionTask, with serializer: Serializer
    ) throws -> Serializer.SerializedObject {
        if let head = task.head, let bodyOnly = serializer as? any BodyOnlySerializer,
            let contentType = head.singleContentType,
            bodyOnly.accepts(statusCode: head.statusCode, contentTypeHeader: contentType, hasBody: !data.isEmpty),
            let value = try? serializer.serialize(response: nil, data: data)
        {
            return value
        }
        return try serializer.serialize(response: task.response, data: data)
    }

    /// Marks the task completed, removes it from the map and calls the did-complete hook; `nil` (and nothing done)
    /// when it had already completed, so every path completes a task exactly once.
    private func markFinished(_ task: SessionTask, error: (any Error)?) -> Settings? {
        guard markCompleted(task, error: error) else { return nil }
        return settings.withLock { $0 }
    }

    /// ``markFinished(_:error:)`` without copying the settings, for a caller that needs none of them.
    private func markCompleted(_ task: SessionTask, error: (any Error)?) -> Bool {
        guard task.markCompleted(error: error) else { return false }
        entries.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        settings.withLock { $0.hooks.didComplete }?(task, error)
        return true
    }

    /// Posts ``Foundation/Notification/Name/taskDidComplete`` with AFNetworking's user-info keys and yields the
    /// event.
    private func announceCompletion(
        of task: SessionTask, serializer: any ResponseSerializer, userInfo: [String: any Sendable],
        object: (any Sendable)?, error: (any Error)?
    ) {
        var info = Self.completionInfo(serializer: serializer, object: object, error: error, room: userInfo.count)
        for (key, value) in userInfo { info[key] = value }
        announceCompletion(of: task, info: info, object: object, error: error)
    }

    private func announceCompletion(
        of task: SessionTask, info: [AnyHashable: Any], object: (any Sendable)?, error: (any Error)?
    ) {
        post(.taskDidComplete, task: task, userInfo: info)
        emit(.didComplete(task, error.map { .failure($0) } ?? .success(object)))
    }

    /// The did-complete notification's user info, with `room` for more keys. Built as the type NotificationCenter
    /// takes, so posting converts nothing.
    private static func completionInfo(
        serializer: any ResponseSerializer, object: (any Sendable)?, error: (any Error)?, room: Int
    ) -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = Dictionary(minimumCapacity: room + 2)
        info[SessionNotificationKey.responseSerializer] = serializer
        if let error { info[SessionNotificationKey.error] = error }
        if let object, error == nil { info[SessionNotificationKey.serializedResponse] = object }
        return info
    }

    /// A serializer's error with the request it answered attached.
    private func attachingRequest(of task: SessionTask, to error: any Error) -> any Error {
        (error as? CourierError)?.withContext { $0.request = task.currentRequest } ?? error
    }

    private func finishDownload(
        _ task: SessionTask, delegate: TaskDelegate, temporaryURL: URL, settings: Settings,
        deliver: Delivery
    ) {
        let response = task.response
        let destination =
            (task as? DownloadTask).flatMap {
                settings.hooks.downloadTaskDidFinishDownloading?($0, temporaryURL, response)
            }
            ?? delegate.destination?(temporaryURL, response)
        guard let destination else {
            // No destination: the file is the caller's to use during the completion handler only.
            deliver(temporaryURL, nil, [SessionNotificationKey.assetPath: temporaryURL]) {
                try? FileManager.default.removeItem(at: temporaryURL)
            }
            return
        }
        do {
            let manager = FileManager.default
            if delegate.downloadOptions.contains(.createIntermediateDirectories) {
                try manager.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            if delegate.downloadOptions.contains(.removePreviousFile), manager.fileExists(atPath: destination.path) {
                try manager.removeItem(at: destination)
            }
            try manager.moveItem(at: temporaryURL, to: destination)
            post(.downloadTaskDidMoveFileSuccessfully, task: task, userInfo: nil)
            do {
                try (delegate.serializer as? any ResponseValidating)?.validate(response: response, data: nil)
                deliver(destination, nil, [SessionNotificationKey.assetPath: destination], nil)
            } catch {
                deliver(destination, error, [SessionNotificationKey.assetPath: destination], nil)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporaryURL)
            let failure = CourierError.fileOperationFailed(
                reason: "The download could not be moved to \(destination.path).", underlyingError: error,
                context: CourierError.Context(request: task.currentRequest, response: response))
            post(.downloadTaskDidFailToMoveFile, task: task, userInfo: [SessionNotificationKey.error: failure])
            deliver(destination, failure, [SessionNotificationKey.assetPath: destination], nil)
        }
    }

    /// Hands a finished task's object or error to its completion handler (on the completion queue, in the completion
    /// group), then posts the notification; `afterward` runs once both are done.
    typealias Delivery =
        @Sendable (
            _ object: (any Sendable)?, _ error: (any Error)?, _ userInfo: [String: any Sendable],
            _ afterward: (@Sendable () -> Void)?
        ) -> Void

    // MARK: Notifications and events

    func post(_ name: Notification.Name, task: SessionTask, userInfo: [AnyHashable: Any]?) {
        NotificationCenter.default.post(name: name, object: task, userInfo: userInfo)
    }

    func emit(_ event: SessionEvent) {
        let continuations = eventContinuations.withLock { $0.isEmpty ? [] : Array($0.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    func events() -> AsyncStream<SessionEvent> {
        let id = UUID()
        return AsyncStream { continuation in
            eventContinuations.withLock { $0[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                self?.eventContinuations.withLock { _ = $0.removeValue(forKey: id) }
            }
        }
    }

    /// Cancels every task (if asked) and refuses new ones.
    func invalidate(cancelingTasks: Bool) {
        invalidated.withLock { $0 = true }
        if cancelingTasks { tasks.forEach { $0.cancel() } }
        let continuations = eventContinuations.withLock { state -> [AsyncStream<SessionEvent>.Continuation] in
            defer { state = [:] }
            return Array(state.values)
        }
        continuations.forEach { $0.finish() }
    }
}
