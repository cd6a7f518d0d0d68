import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Connections a feature opens itself (``ConnectionTask``): the opening request runs through the adapters and the
/// retrier as a task's requests do, and the task completes when the feature says its connection has closed.
extension SessionCore {
    /// `request` as the session sends it: its fields, the configuration's it lacks, its URL's cookies, and its
    /// URL's security policy (with the trust hook). `ws` and `wss` count as `http` and `https`.
    func connectionRequest(for request: URLRequest) throws -> TransportRequest {
        guard let url = request.url else { throw CourierError.invalidURL("") }
        let httpURL = Self.httpURL(url)
        var (outgoing, _) = transportRequest(.made(request), url: url, cookieURL: httpURL)
        try configure(&outgoing, policyURL: httpURL)
        return outgoing
    }

    /// `ws` and `wss` URLs as the `http` and `https` ones whose policies and cookies they share.
    static func httpURL(_ url: URL) -> URL {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.scheme = scheme == "ws" ? "http" : "https"
        return components.url ?? url
    }

    /// Resumes `task` and opens its connection (see ``ConnectionTask/open(_:onCancel:)``); on failure the task
    /// completes with the error thrown.
    func open<Connection: Sendable>(
        _ task: SessionTask, delegate: TaskDelegate,
        with open: @escaping @Sendable (TransportRequest) async throws -> OpenedConnection<Connection>,
        onCancel: @escaping @Sendable (Connection) -> Void
    ) async throws -> Connection {
        task.startRunning()
        guard task.state == .running else {
            throw task.error ?? CourierError.cancelled(context: context(for: task, delegate: delegate))
        }
        delegate.state.withLock { [now = Date()] in $0.noteStart(now) }
        let opened: OpenedConnection<Connection>
        do {
            // A Swift task of its own, so that `cancel()` on the session task can stop it.
            opened = try await runInOwnTask(task) {
                try await self.openConnection(task, delegate: delegate, with: open)
            }
        } catch {
            let failure = courierError(error, task: task, delegate: delegate)
            complete(task, delegate: delegate, with: .failed(failure))
            throw failure
        }
        let connection = opened.connection
        // Cancelled while it opened: the connection closes at once.
        task.attachRunner { onCancel(connection) }
        return connection
    }

    /// The opening loop: adapt, open, and on failure ask the retrier.
    private func openConnection<Connection: Sendable>(
        _ task: SessionTask, delegate: TaskDelegate,
        with open: @Sendable (TransportRequest) async throws -> OpenedConnection<Connection>
    ) async throws -> OpenedConnection<Connection> {
        let exchange = TaskExchange(
            core: self, task: task, delegate: delegate, hooks: hookSnapshot, source: task.requestSource, body: nil,
            interceptor: TaskExchange.interceptor(leadingInterceptor, configuration.interceptor, nil))
        while true {
            try checkCancellation(task, delegate: delegate)
            let unadapted = exchange.source
            do {
                try await exchange.adapt()
                let request = exchange.request
                let outgoing = try connectionRequest(for: request)
                delegate.state.withLock { [made = exchange.source.made] in $0.beginExchange(request: made) }
                let fetchStart = Date()
                let opened = try await open(outgoing)
                delegate.state.withLock { $0.response = opened.response }
                storeCookies(
                    from: opened.response.headers, handlesCookies: request.httpShouldHandleCookies,
                    url: Self.httpURL(outgoing.url))
                var metrics = opened.metrics ?? TransactionMetrics(method: outgoing.method, url: outgoing.url)
                if opened.metrics == nil {
                    (metrics.fetchStartDate, metrics.responseStartDate) = (fetchStart, Date())
                    metrics.statusCode = opened.response.statusCode
                }
                delegate.state.withLock { [now = Date()] in $0.recordTransaction(metrics, at: now) }
                events.send(.receivedResponse(task, opened.response), of: delegate)
                return opened
            } catch {
                let response = (error as? CourierError)?.response
                guard try await exchange.retry(after: error, response: response) else { throw error }
                exchange.source = unadapted
            }
        }
    }

    /// Completes a connection task whose connection has closed: -999 when it was cancelled, else `error`.
    func finishConnection(_ task: SessionTask, delegate: TaskDelegate, error: (any Error)?) {
        let outcome: (any Error)? =
            task.isCancelling ? CourierError.cancelled(context: context(for: task, delegate: delegate)) : error
        complete(task, delegate: delegate, with: .ended(outcome))
    }
}
