import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a redirect turns one request into the next, as browsers and `URLSession` do.
enum RedirectPolicy {
    static let statusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// Fields that carry a secret for one origin, removed whenever a redirect leaves it.
    static let secretHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The next request for a 3xx `response` to `request`, and whether it keeps the body; `nil` when the response
    /// is not a redirect this policy follows (no `Location`, one that is not a URL, or one whose scheme is not
    /// `http` or `https`: a server never leads a request to a Unix socket or another protocol, and the 3xx is
    /// delivered as it is).
    ///
    /// - 301, 302 and 303 turn any method but GET and HEAD into GET without a body.
    /// - 307 and 308 keep the method and the body.
    /// - ``secretHeaders`` and `alsoRemoving` are dropped when the redirect leaves the origin (scheme, host, port).
    static func nextRequest(
        after request: URLRequest, response: HTTPURLResponse, alsoRemoving extraHeaders: Set<String> = []
    ) -> (request: URLRequest, keepsBody: Bool)? {
        guard statusCodes.contains(response.statusCode), let current = request.url,
            let location = response.value(forHTTPHeaderField: "Location"),
            let target = URL(string: location, relativeTo: current)?.absoluteURL, URLCheck.hasWebScheme(target)
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
            for name in secretHeaders { next.setValue(nil, forHTTPHeaderField: name) }
            let extra = Set(extraHeaders.map { $0.lowercased() })
            for name in (next.allHTTPHeaderFields ?? [:]).keys where extra.contains(name.lowercased()) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return (next, keepsBody)
    }

    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        isOrigin(scheme: lhs.scheme, host: lhs.host, port: lhs.port, of: rhs)
    }

    /// Whether `url` has the origin made of `scheme`, `host` and `port` (`nil`: the scheme's default). Hosts compare
    /// without regard to case or IPv6 brackets.
    static func isOrigin(scheme: String?, host: String?, port: Int?, of url: URL) -> Bool {
        scheme?.lowercased() == url.scheme?.lowercased() && bareHost(host) == bareHost(url.host)
            && effectivePort(port, scheme: scheme) == effectivePort(url.port, scheme: url.scheme)
    }

    /// Whether following `current` to `next` leaves TLS: from `https` to plain `http`.
    static func isDowngrade(from current: URL, to next: URL) -> Bool {
        current.scheme?.lowercased() == "https" && next.scheme?.lowercased() == "http"
    }

    private static func effectivePort(_ port: Int?, scheme: String?) -> Int? {
        port ?? (scheme?.lowercased() == "https" ? 443 : scheme?.lowercased() == "http" ? 80 : nil)
    }

    private static func bareHost(_ host: String?) -> String? {
        host.map { $0.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
    }
}
