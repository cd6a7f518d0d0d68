import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
                events.send(.sentBodyData(task, bytes: step, total: totalSent, expected: total))
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
