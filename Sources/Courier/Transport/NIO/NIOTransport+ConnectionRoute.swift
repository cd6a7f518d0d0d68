import Foundation

extension NIOTransport {
    /// Connections for some origins go to another host or port, as curl's `--connect-to HOST:PORT:HOST2:PORT2`:
    /// a request keeps its URL's host (and port) for `Host`, SNI and the certificate check, and only the TCP
    /// connection goes elsewhere, e.g. to one node of a cluster behind a name, or to a test server.
    ///
    /// A route matches a request whose URL has ``host`` and ``port`` (`nil` matches any); the first route in
    /// ``Configuration/connectionRoutes`` that matches is the one taken, and a ``targetHost`` or ``targetPort`` of
    /// `nil` keeps the request's own. ``Configuration/hostAddresses`` then applies to the target host. Routes apply to
    /// every connection the transport makes without a proxy (its own connections, AsyncHTTPClient's, WebSockets,
    /// the trust gate's probe) and to every hop of a redirect; through a proxy, the proxy connects to the origin.
    ///
    /// Invariant: every port is in 1...65535, and hosts are lower-cased without IPv6 brackets.
    public struct ConnectionRoute: Sendable, Hashable {
        /// The URL host this route is for; `nil` for any.
        public let host: String?
        /// The URL port (the scheme's default when the URL has none) this route is for; `nil` for any.
        public let port: Int?
        /// The host (a name or an IP address) to connect to instead; `nil` keeps the request's.
        public let targetHost: String?
        /// The port to connect to instead; `nil` keeps the request's.
        public let targetPort: Int?

        /// A route from `host`:`port` to `targetHost`:`targetPort`; `nil` when a port is outside 1...65535. An
        /// empty host counts as `nil`, and an IPv6 address may be given with or without brackets.
        public init?(host: String? = nil, port: Int? = nil, targetHost: String? = nil, targetPort: Int? = nil) {
            let ports = 1...65535
            if let port, !ports.contains(port) { return nil }
            if let targetPort, !ports.contains(targetPort) { return nil }
            self.host = host.flatMap(Self.normalized)
            self.port = port
            self.targetHost = targetHost.flatMap(Self.normalized)
            self.targetPort = targetPort
        }

        /// Whether a request to `host` (normalized) on `port` takes this route.
        func matches(host: String, port: Int) -> Bool {
            (self.host == nil || self.host == host) && (self.port == nil || self.port == port)
        }

        /// Lower-cased, IPv6 brackets removed; `nil` for an empty host.
        static func normalized(_ host: String) -> String? {
            var host = host.lowercased()
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return host.isEmpty ? nil : host
        }

        /// Where a connection for `url` goes under the first of `routes` that matches it, or `nil` when none does
        /// (or `url` has no host).
        public static func target(of url: URL, in routes: [ConnectionRoute]) -> (host: String, port: Int)? {
            guard !routes.isEmpty, let host = url.host else { return nil }
            return target(host: host, port: url.port ?? URLCheck.defaultPort(scheme: url.scheme), in: routes)
        }

        /// Where a connection for `host` (as a URL or an origin has it) on `port` goes under the first of `routes`
        /// that matches it, or `nil` when none does.
        static func target(host: String, port: Int, in routes: [ConnectionRoute]) -> (host: String, port: Int)? {
            guard let host = normalized(host),
                let route = routes.first(where: { $0.matches(host: host, port: port) })
            else { return nil }
            return (route.targetHost ?? host, route.targetPort ?? port)
        }
    }
}
