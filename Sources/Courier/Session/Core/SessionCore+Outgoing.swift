import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What goes out: the transport request made from a task's `URLRequest` (headers, cookies, upload progress), the
/// early start of a plain request, and the cookies that come back.
extension SessionCore {
    /// Starts a plain request's exchange before its task is set up, so that the task's bookkeeping overlaps the
    /// request's way out; `nil` when the session would not collect its body anyway (see
    /// ``collects(_:delegate:hooks:)``), when it needs the cache or has an adapter that adapts (it sees the
    /// request first), or when the transport cannot start at once. The
    /// request goes out exactly as ``makeTransportRequest(_:url:body:task:delegate:)`` would send it; any error is
    /// left to the normal path to report.
    ///
    /// The caller must hand the result to ``runTyped(_:delegate:serializer:early:)`` with `delegate`.
    func startEarly(_ plain: PlainRequest, delegate: TaskDelegate) -> CollectedResponse? {
        guard configuration.urlCache == nil, configuration.interceptor?.adaptsRequests != true,
            delegate.interceptor?.adaptsRequests != true, leadingInterceptor?.adaptsRequests != true,
            URLCheck.hasWebScheme(plain.url),  // the serializer checked the host and port
            !plain.headerFields.keys.contains(where: { $0.caseInsensitiveEquals("Content-Length") }),
            !isInvalidated, !Self.watchesExchanges(hooks)
        else { return nil }
        var outgoing = TransportRequest(
            method: plain.method.uppercased(), url: plain.url,
            headers: transportHeaders(plain.sortedHeaders, url: plain.url, handlesCookies: plain.handlesCookies))
        guard (try? configure(&outgoing, policyURL: plain.url)) != nil else { return nil }
        return try? transport.startCollecting(
            outgoing, cancellation: delegate.exchange, activity: { delegate.touch() })
    }

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

    /// The transport request for `request` to `url` with `body`; notes the upload's size and reports its progress
    /// to the task, its delegate and the event sink.
    func makeTransportRequest(
        _ request: URLRequest, url: URL, body: HTTPRequestBody?, task: SessionTask, delegate: TaskDelegate
    ) -> TransportRequest {
        let fields = request.allHTTPHeaderFields ?? [:]
        let declaredLength = fields.first(where: { $0.key.caseInsensitiveEquals("Content-Length") })?.value
        let headers = transportHeaders(
            HTTPRequestSerializer.sorted(fields), url: url, handlesCookies: request.httpShouldHandleCookies)
        let total = body?.length ?? declaredLength.flatMap { Int64($0) } ?? -1
        delegate.expectUpload(total: total)
        task.mutable.withLock { $0.bytesExpectedToSend = total }
        let method = (request.httpMethod ?? "GET").uppercased()
        guard body != nil else { return TransportRequest(method: method, url: url, headers: headers) }
        let sent = Locked(Int64(0))
        let events = events
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
                events.send(.sentBodyData(task, bytes: step, total: totalSent, expected: total))
            })
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
