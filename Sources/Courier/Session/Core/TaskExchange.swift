import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One task's way through the network, from its first request to the body of its final response.
///
/// ``run(collect:)`` is the loop that sends each request; `answer` reads top to bottom as the steps a response goes
/// through: each step that can answer it with another request (a redirect, a challenge, a download that cannot
/// resume) returns whether it did, and the loop sends that request. Each step asks a pure decision beside it what to
/// do (``RedirectPolicy``, ``Authentication``, ``HTTPCaching``, ``ResumeDecision``) and lives in its own file
/// (`TaskExchange+Redirect`, …).
///
/// A class, used by the one Swift task that runs the exchange: each of its `async` methods then keeps a reference
/// in its frame rather than a copy of every field (the hooks alone are hundreds of bytes), and a request waiting
/// for a connection holds a few of those frames. For the same reason the steps are `@inline(never)`: inlined, each
/// step's locals would sit in the request loop's frame, kilobytes held by every request while it waits.
final class TaskExchange {
    let core: SessionCore
    let task: SessionTask
    let delegate: TaskDelegate
    /// The hooks as they were when the task started.
    private let hookSnapshot: SessionEventSink.HookSnapshot
    var hooks: SessionHooks { hookSnapshot.hooks }
    /// The request sent next, as Foundation's `URLRequest` or, until a step needs one, the plain request it is
    /// made from (the common `async` call never needs one).
    var source: TaskRequest
    /// The request sent next; setting it makes it Foundation's from then on.
    var request: URLRequest {
        get { source.make() ?? URLRequest(url: URL(fileURLWithPath: "/")) }  // run(collect:) checked there is one
        set { source = .made(newValue) }
    }
    /// Its body: the upload's, or the request's `httpBody`; dropped by a redirect that changes the method.
    var body: HTTPRequestBody?
    /// When the task started, while its start is still to be announced (its `resumed` event, its timeouts): that
    /// bookkeeping need not precede its first request, so it runs as soon as the request is on its way, and before
    /// anything else reports on the task.
    var startToAnnounce: Date?
    var cachePlan: HTTPCaching.Plan = .network(store: false)
    /// The validators this session added for a revalidation, which a redirect takes away again.
    var addedConditions: [String] = []
    /// The method and URL of every request that redirected, to stop a loop.
    var visited: Set<String> = []
    var redirects = 0
    var authenticationAttempts = 0
    /// The task's place at the session's gate, until its first response is in.
    private var ticket: ExchangeAdmission.Ticket?
    /// The leading interceptor (the tracing's), the session's, then the request's (see ``RequestInterceptor``);
    /// `nil` when there is none.
    let interceptor: (any RequestInterceptor)?

    init(
        core: SessionCore, task: SessionTask, delegate: TaskDelegate, hooks: SessionEventSink.HookSnapshot,
        source: TaskRequest,
        body: HTTPRequestBody?, startToAnnounce: Date? = nil, interceptor: (any RequestInterceptor)?
    ) {
        self.core = core
        self.task = task
        self.delegate = delegate
        hookSnapshot = hooks
        self.source = source
        self.body = body
        self.startToAnnounce = startToAnnounce
        self.interceptor = interceptor
    }

    /// Runs `task`'s exchanges. With `collect`, the transport gathers each body whole (see
    /// ``SessionCore/collects(_:delegate:hooks:)``). A task that started at `startDate` has its start announced
    /// (``SessionCore/announceStart(of:delegate:startDate:)``) once, as soon as the first request has gone out, or
    /// before whatever else happens first: a cached answer, an adapter, a failure.
    ///
    /// `ticket`, the task's place at the session's gate (``ExchangeAdmission``), is given back once the first
    /// response is in, or when the task ends before that.
    static func run(
        _ task: SessionTask, delegate: TaskDelegate, in core: SessionCore, collect: Bool,
        announcingStartFrom startDate: Date? = nil, ticket: ExchangeAdmission.Ticket? = nil
    ) async throws {
        let exchange = make(task, delegate: delegate, in: core, announcingStartFrom: startDate)
        exchange.ticket = ticket
        defer { exchange.giveBackTicket() }
        do {
            guard exchange.source.url != nil else { throw CourierError.invalidURL("") }
            if let file = delegate.downloadFile { try await exchange.open(file) }
            try await exchange.run(collect: collect)
        } catch {
            exchange.announceStart()
            throw error
        }
    }

    /// The exchange of `task`; synchronous, so the hooks and requests it copies stay out of the frame of
    /// ``run(_:delegate:in:collect:announcingStartFrom:)``, which a waiting request keeps.
    @inline(never)
    private static func make(
        _ task: SessionTask, delegate: TaskDelegate, in core: SessionCore, announcingStartFrom startDate: Date?
    ) -> TaskExchange {
        let source = task.requestSource
        // A request's own hooks make a snapshot of their own; every other task shares the session's.
        let hooks = delegate.taskHooks.map { SessionEventSink.HookSnapshot($0.replacing(in: core.hooks)) }
        return TaskExchange(
            core: core, task: task, delegate: delegate, hooks: hooks ?? core.hookSnapshot, source: source,
            body: delegate.uploadBody ?? source.httpBody.map { .data($0) }, startToAnnounce: startDate,
            interceptor: Self.interceptor(core.leadingInterceptor, core.configuration.interceptor, delegate.interceptor)
        )
    }

    /// Opens a download's file; when the resume data's partial file is gone, the request asks for the whole body
    /// (a 206 for the range would leave only the file's tail).
    @inline(never)
    private func open(_ file: DownloadFile) async throws {
        guard try await !file.open(), var request = source.make() else { return }
        request.setValue(nil, forHTTPHeaderField: "Range")
        request.setValue(nil, forHTTPHeaderField: "If-Range")
        source = .made(request)
    }

    /// Gives the task's place at the session's gate to the next task waiting, if it still holds one.
    private func giveBackTicket() {
        ticket?.giveBack()
        ticket = nil
    }

    /// Announces the task's start if that is still to be done.
    func announceStart() {
        guard let startDate = startToAnnounce else { return }
        startToAnnounce = nil
        core.announceStart(of: task, delegate: delegate, startDate: startDate)
    }

    /// The request loop. Each step is entered only when it can apply (a cache, an adapter, a redirect's or a
    /// challenge's status, a download that resumes, a retrier), so a plain `GET` answered `200` reads straight
    /// through: send, then receive.
    private func run(collect: Bool) async throws {
        let caches = core.configuration.urlCache != nil && planCaching()
        let adapts = interceptor?.adaptsRequests == true
        // Only a request that goes out at once, with no stored response or adapter to see it first, overlaps the
        // bookkeeping.
        if caches || adapts { announceStart() }
        if caches, try answerFromCacheOrPrepareRevalidation() { return }
        while true {
            try core.checkCancellation(task, delegate: delegate)
            // A retry starts again from the request as it was before the adapters changed it.
            let unadapted = source
            let sent: (response: TransportResponse, url: URL)
            do {
                if adapts { try await adapt() }
                sent = try await send(collect: collect)
            } catch {
                guard interceptor != nil, try await retry(after: error) else { throw error }
                source = unadapted
                continue
            }
            if try await answer(sent.response, url: sent.url, unadapted: unadapted) { return }
        }
    }

    /// The steps a response goes through, in order; `true` when the task is done, `false` when one of them has
    /// set up another request. Not inlined into ``run(collect:)``, whose frame a request waiting for its response
    /// keeps: these steps' values are only needed once the response is in.
    @inline(never)
    private func answer(_ response: TransportResponse, url: URL, unadapted: TaskRequest) async throws -> Bool {
        let head = ResponseHead(response)
        delegate.state.withLock { $0.response = head }
        core.storeCookies(from: response, handlesCookies: source.handlesCookies, url: url)
        let status = head.statusCode
        if RedirectPolicy.statusCodes.contains(status), try await followRedirect(response, head: head, url: url) {
            return false
        }
        if status == 401, try await answerChallenge(response, head: head, url: url) { return false }
        if status == 304, try await finishRevalidation(response, head: head) { return true }
        let resumes = (delegate.downloadFile?.resumeOffset ?? 0) > 0
        if resumes, try await retryIfResumeFails(response, head: head) { return false }
        if interceptor != nil, try await retryIfStatusFails(response, head: head) {
            source = unadapted
            return false
        }
        do {
            try await receive(response, head: head)
        } catch {
            guard try await retryRestOfDownload(after: error, head: head, original: unadapted) else { throw error }
            return false
        }
        return true
    }

    /// Sends the request and returns the response head with the body to read. A collected exchange is started
    /// before the task's start is announced (``announceStart()``), and awaited after.
    @inline(never)
    private func send(collect: Bool) async throws -> (TransportResponse, URL) {
        guard let url = source.url else { throw CourierError.invalidURL("") }
        let fetchStart = Date()
        let response: TransportResponse
        // What follows the first response (a redirect, a retry, a challenge) may wait for another request of this
        // origin, a token refresh for one: it must not hold a place at the gate that request needs.
        defer { giveBackTicket() }
        switch try start(url: url, collect: collect) {
        case .started(let started): response = try await started.response()
        case .unstarted(let unstarted): response = try await send(unstarted)
        }
        record(response, url: url, fetchStart: fetchStart)
        return (response, url)
    }

    /// A request made and checked: started, when the transport can start it before it is awaited, or to be sent.
    /// Its cases hold references, so the frame that awaits the response stays small.
    private enum Outgoing {
        case started(CollectedResponse)
        case unstarted(UnstartedRequest)
    }

    private final class UnstartedRequest {
        let request: TransportRequest
        let collect: Bool

        init(_ request: TransportRequest, collect: Bool) {
            self.request = request
            self.collect = collect
        }
    }

    /// Sends a request the transport did not start: collected or streamed.
    @inline(never)
    private func send(_ unstarted: UnstartedRequest) async throws -> TransportResponse {
        guard unstarted.collect else { return try await core.transport.send(unstarted.request) }
        return try await core.transport.collect(
            unstarted.request, cancellation: delegate.exchange, activity: { [delegate] in delegate.touch() })
    }

    /// Makes the transport request for `url` and starts it when the transport can. Synchronous, so its locals live
    /// on the thread's stack for the call only, not in the frame a waiting request keeps.
    @inline(never)
    private func start(url: URL, collect: Bool) throws -> Outgoing {
        // A plain request is still the original, which the task makes on demand.
        delegate.state.withLock { [made = source.made] in $0.beginExchange(request: made) }
        // Announced once the request is on its way, or has failed to go out.
        defer { announceStart() }
        try URLCheck.validate(url, allowsUnixSockets: core.configuration.allowsUnixSocketURLs)
        var request = core.makeTransportRequest(source, url: url, body: body, task: task, delegate: delegate)
        try core.configure(&request, policyURL: url)
        delegate.overrideTrust(of: &request)
        guard collect,
            let started = try core.transport.startCollecting(
                request, cancellation: delegate.exchange, activity: { [delegate] in delegate.touch() })
        else { return .unstarted(UnstartedRequest(request, collect: collect)) }
        return .started(started)
    }

    /// Notes the response's transaction: the transport's metrics, or the dates the session saw when it measures
    /// nothing.
    @inline(never)
    private func record(_ response: TransportResponse, url: URL, fetchStart: Date) {
        delegate.touch()
        let now = Date()
        let metrics =
            response.metrics
            ?? {
                var metrics = TransactionMetrics(method: source.method, url: url)
                (metrics.fetchStartDate, metrics.responseStartDate) = (fetchStart, now)
                metrics.statusCode = response.statusCode
                return metrics
            }()
        delegate.state.withLock { $0.recordTransaction(metrics, at: now) }
    }

    /// The leading interceptor, the session's and the request's as one, in that order; `nil` for none.
    static func interceptor(
        _ first: (any RequestInterceptor)?, _ second: (any RequestInterceptor)?, _ third: (any RequestInterceptor)?
    ) -> (any RequestInterceptor)? {
        // No array is made on the common path, where there is none.
        guard first != nil || second != nil || third != nil else { return nil }
        let present = [first, second, third].compactMap { $0 }
        return present.count == 1 ? present[0] : Interceptor(interceptors: present)
    }

    /// Foundation's form of the head, made only on the paths that hand it out or read more than the status.
    static func http(_ head: ResponseHead) throws -> HTTPURLResponse {
        guard let http = head.response else {
            throw CourierError.badServerResponse(
                reason: "the response head could not be read", underlyingError: nil, context: CourierError.Context())
        }
        return http
    }

    /// Reads and drops a body that is not delivered (a followed redirect, an answered challenge), so the connection
    /// can be reused; stops after 1 MiB and lets the transport close the connection instead. The response's
    /// transaction ends here, with the bytes read.
    func discard(_ body: DataChunks) async {
        var iterator = body.makeAsyncIterator()
        var received: Int64 = 0
        while received < 1 << 20, let chunk = try? await iterator.next() { received += Int64(chunk.count) }
        delegate.endTransaction(received: received)
    }
}

/// What goes out: the transport request made from a task's request (headers, cookies, upload progress), and the
/// cookies that come back.
extension SessionCore {
    /// Gives `outgoing` what the configuration decides per request: the security policy for its URL (with the trust
    /// hook), the HTTP versions, the proxy, and the most body bytes a collected exchange may gather.
    ///
    /// - Throws: ``CourierError`` when the policy or the proxy settings cannot apply to the URL.
    func configure(_ outgoing: inout TransportRequest, policyURL: URL) throws {
        outgoing.securityPolicy = try securityPolicy(for: policyURL)
        outgoing.httpVersion = configuration.httpVersion
        outgoing.proxy = try configuration.proxy?.proxy(for: outgoing.url)
        outgoing.maximumCollectedBodySize = max(configuration.maximumInMemoryBodySize, 0)
    }

    /// The transport request for `source` to `url` with `body`; notes the upload's size and reports its progress
    /// to the task, its delegate and the event sink. A plain request goes out without a `URLRequest` being made.
    func makeTransportRequest(
        _ source: TaskRequest, url: URL, body: HTTPRequestBody?, task: SessionTask, delegate: TaskDelegate
    ) -> TransportRequest {
        let (outgoing, fields) = transportRequest(source, url: url, cookieURL: url)
        let declaredLength = fields.first(where: { $0.key.caseInsensitiveEquals("Content-Length") })?.value
        let total = body?.length ?? declaredLength.flatMap { Int64($0) } ?? -1
        delegate.state.withLock { $0.expectUpload(total: total) }
        guard body != nil else { return outgoing }
        let sent = Locked(Int64(0))
        let events = events
        return TransportRequest(
            method: outgoing.method, url: url, headers: outgoing.headers, body: body,
            bodyProgress: { [weak task] totalSent in
                guard let task else { return }
                let step = sent.withLock { previous -> Int64 in
                    defer { previous = totalSent }
                    return totalSent - previous
                }
                guard step > 0 else { return }
                delegate.didSend(totalBytesSent: totalSent)
                events.send(
                    .sentBodyData(task, bytes: step, total: totalSent, expected: total), of: delegate)
            })
    }

    /// The one builder of what goes out, for exchanges and connection tasks alike: `source`'s method and header
    /// fields, the configuration's it lacks and the cookies stored for `cookieURL`, to `url`; with the request's own
    /// fields as it had them (a plain request makes no `URLRequest` for them).
    func transportRequest(_ source: TaskRequest, url: URL, cookieURL: URL) -> (TransportRequest, [String: String]) {
        let fields: [String: String]
        let headers: HTTPHeaderFields
        switch source {
        case .plain(let plain, _):
            fields = plain.headerFields
            headers = transportHeaders(plain.sortedHeaders, url: cookieURL, handlesCookies: plain.handlesCookies)
        case .made(let request):
            fields = request?.allHTTPHeaderFields ?? [:]
            headers = transportHeaders(
                HTTPRequestSerializer.sorted(fields), url: cookieURL, handlesCookies: source.handlesCookies)
        }
        return (TransportRequest(method: source.method.uppercased(), url: url, headers: headers), fields)
    }

    /// The header fields a request goes out with: its own (`fields`, sorted by name), the configuration's additional
    /// ones it lacks and the cookies stored for `url`; never a framing field.
    func transportHeaders(_ fields: HTTPHeaderFields, url: URL, handlesCookies: Bool) -> HTTPHeaderFields {
        var headers = fields
        for field in configuration.httpAdditionalHeaders where headers[field.name] == nil {
            headers[field.name] = field.value
        }
        if configuration.httpShouldSetCookies, handlesCookies, headers["Cookie"] == nil,
            let field = configuration.cookieStore?.cookieField(for: url)
        {
            headers["Cookie"] = field
        }
        headers["Content-Length"] = nil
        headers["Transfer-Encoding"] = nil
        return headers
    }

    /// Stores the response's cookies, when the configuration and the request handle cookies.
    func storeCookies(from response: TransportResponse, handlesCookies: Bool, url: URL) {
        storeCookies(from: response.headers, handlesCookies: handlesCookies, url: url)
    }

    /// Stores the cookies `headers` set for `url`, when the configuration and the request let the session.
    func storeCookies(from headers: HTTPHeaderFields, handlesCookies: Bool, url: URL) {
        guard configuration.httpShouldSetCookies, handlesCookies, let store = configuration.cookieStore else { return }
        let values = headers.values(for: "Set-Cookie")
        if !values.isEmpty { store.storeCookies(fromSetCookieFields: values, for: url) }
    }

    /// Throws `CancellationError` once the task, its Swift task or its exchanges were cancelled.
    func checkCancellation(_ task: SessionTask, delegate: TaskDelegate) throws {
        if isCancelled(task, delegate: delegate) { throw CancellationError() }
    }

    /// Whether the task, its Swift task or its exchanges were cancelled (a timeout cancels the exchanges).
    func isCancelled(_ task: SessionTask, delegate: TaskDelegate) -> Bool {
        Task.isCancelled || task.isCancelling || delegate.exchange.isCancelled
    }
}
