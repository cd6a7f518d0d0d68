import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a redirect turns one request into the next, as browsers and `URLSession` do.
enum RedirectPolicy {
    static let statusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// The next request for a 3xx `response` to `request`, and whether it keeps the body; `nil` when the response
    /// is not a redirect this policy follows (no `Location`, or one that is not a URL).
    ///
    /// - 301, 302 and 303 turn any method but GET and HEAD into GET without a body.
    /// - 307 and 308 keep the method and the body.
    /// - `Authorization` and `Cookie` are dropped when the redirect leaves the origin (scheme, host, port).
    static func nextRequest(after request: URLRequest, response: HTTPURLResponse) -> (
        request: URLRequest, keepsBody: Bool
    )? {
        guard statusCodes.contains(response.statusCode), let current = request.url,
            let location = response.value(forHTTPHeaderField: "Location"),
            let target = URL(string: location, relativeTo: current)?.absoluteURL, target.scheme != nil
        else { return nil }
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        var keepsBody = true
        if [301, 302, 303].contains(response.statusCode), method != "GET", method != "HEAD" {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
            keepsBody = false
        }
        if !sameOrigin(current, target) {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
            next.setValue(nil, forHTTPHeaderField: "Cookie")
        }
        return (next, keepsBody)
    }

    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
