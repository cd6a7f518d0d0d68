import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The seam for features that open connections of their own (WebSockets): a request as the session would send
/// it, and the response's cookies stored as the session would store them.
extension SessionManager {
    /// `request` as the session sends it: its header fields, the configuration's additional fields it lacks, the
    /// cookies stored for its URL, and the security policy for its URL (with the session's trust hook).
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` for a request without a URL.
    public func transportRequest(for request: URLRequest) throws -> TransportRequest {
        guard let url = request.url else { throw CourierError.invalidURL("") }
        let headers = core.transportHeaders(
            HTTPRequestSerializer.sorted(request.allHTTPHeaderFields ?? [:]), url: Self.httpURL(url),
            handlesCookies: request.httpShouldHandleCookies)
        var outgoing = TransportRequest(method: (request.httpMethod ?? "GET").uppercased(), url: url, headers: headers)
        outgoing.securityPolicy = try core.securityPolicy(for: Self.httpURL(url))
        return outgoing
    }

    /// Stores the cookies a response to `request` set, as the session stores those of its own tasks.
    public func storeCookies(from response: ResponseHead, for request: URLRequest) {
        guard let url = request.url else { return }
        core.storeCookies(
            from: response.headers, handlesCookies: request.httpShouldHandleCookies, url: Self.httpURL(url))
    }

    /// `ws` and `wss` URLs as the `http` and `https` ones whose policies and cookies they share.
    static func httpURL(_ url: URL) -> URL {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.scheme = scheme == "ws" ? "http" : "https"
        return components.url ?? url
    }
}
