import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The redirect step: follows a 3xx as ``RedirectPolicy`` and the will-redirect hook decide.
extension TaskExchange {
    /// Makes the request a redirect leads to the next one to send, and returns `true`; `false` when the response
    /// is not a redirect to follow (then it is delivered as it is).
    @inline(never)
    func followRedirect(_ response: TransportResponse, head: ResponseHead, url: URL) async throws -> Bool {
        guard RedirectPolicy.statusCodes.contains(head.statusCode) else { return false }
        let http = try Self.http(head)
        guard
            let redirect = RedirectPolicy.nextRequest(
                after: request, response: http, alsoRemoving: core.configuration.headersRemovedOnCrossOriginRedirect),
            redirect.keepsBody == false || bodyCanGoAgain()
        else { return false }
        redirects += 1
        if redirects > core.configuration.maximumRedirects { throw tooManyRedirects(http) }
        let proposed = hooks.willPerformRedirection.map { $0(task, http, redirect.request) } ?? redirect.request
        guard var next = proposed else { return false }
        try checkRedirect(to: next)
        if case .revalidate = cachePlan {
            // The stored validators belong to the first URL, not to where the redirect leads.
            for name in addedConditions { next.setValue(nil, forHTTPHeaderField: name) }
            cachePlan = .network(store: true)
        }
        // Every request sent so far had the key of one that redirected (a retry after a challenge or a 416 repeats
        // its key), so keys are collected here rather than before each send.
        visited.insert("\(request.httpMethod ?? "GET") \(url.absoluteString)")
        let key = "\(next.httpMethod ?? "GET") \(next.url?.absoluteString ?? "")"
        if visited.contains(key) { throw tooManyRedirects(http) }
        if !redirect.keepsBody {
            body = nil
        } else if next.httpBody != redirect.request.httpBody {
            body = next.httpBody.map { .data($0) }  // the hook replaced the body
        }
        await discard(response.body)
        delegate.state.withLock { $0.followedRedirect() }
        core.events.send(.redirected(task, response: http, request: next), of: delegate)
        request = next
        return true
    }

    /// Throws unless the session may follow a redirect to `next` (whether the automatic policy or a hook proposed
    /// it): `http` or `https` only, and no step down from `https` to `http` unless the configuration allows it. The
    /// host and port are checked before the next request is sent, as every request's are.
    private func checkRedirect(to next: URLRequest) throws {
        guard let target = next.url else { throw CourierError.invalidURL("") }
        guard URLCheck.hasWebScheme(target) else {
            throw CourierError.unsupportedURL(
                target, reason: "a redirect may lead only to http or https",
                context: CourierError.Context(request: request))
        }
        if let current = request.url, RedirectPolicy.isDowngrade(from: current, to: target),
            !core.configuration.allowsInsecureRedirects
        {
            throw CourierError.insecureRedirect(
                from: current, to: target, context: CourierError.Context(request: request))
        }
    }

    /// Whether the request's body can be sent again: it is replayable, or it is not and the
    /// ``SessionHooks/needNewBodyStream`` hook gave a new one, which takes its place.
    func bodyCanGoAgain() -> Bool {
        guard let body, !body.isReplayable else { return true }
        guard let fresh = hooks.needNewBodyStream?(task) else { return false }
        self.body = fresh
        return true
    }

    private func tooManyRedirects(_ response: HTTPURLResponse) -> CourierError {
        .tooManyRedirects(context: CourierError.Context(request: task.currentRequest, response: response))
    }
}
