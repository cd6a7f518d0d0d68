import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

/// Which client sends a request: the shared one, one per proxy and HTTP version, or a trust gate's.
extension NIOTransport {
    /// The client for `request`: the shared one, or, for `https` under a non-default ``SecurityPolicy``, the
    /// client of the origin's trust gate once the origin has passed the policy (see ``NIOTrustGate``).
    func client(enforcing request: TransportRequest) async throws -> HTTPClient {
        guard let gate = try trustGate(for: request) else { return try sharedClient(for: request) }
        do {
            try await gate.ensureTrusted()
        } catch {
            throw Self.courierError(error, url: request.url, proxy: request.proxy)
        }
        // The evaluation does not stop for cancellation (other requests may be waiting for it); this request does.
        if Task.isCancelled { throw CourierError.cancelled(context: CourierError.Context()) }
        return gate.client
    }

    /// The client for a request under the default policy: the shared one, or the one for its proxy or its
    /// HTTP/1.1-only `https` (see ``otherClients``).
    func sharedClient(for request: TransportRequest) throws -> HTTPClient {
        let kind = try clientKind(for: request)
        guard kind != ClientKind() else { return client }
        let settings = try settings(for: kind)
        return otherClients.withLock { made in
            if let client = made[kind] { return client }
            let client = HTTPClient(eventLoopGroup: group, configuration: settings)
            made[kind] = client
            return client
        }
    }

    /// What `request` needs of its client beyond the shared one's settings.
    func clientKind(for request: TransportRequest) throws -> ClientKind {
        let https = request.url.scheme?.lowercased() == "https"
        return ClientKind(
            http1Only: request.httpVersion == .http1Only && configuration.allowsHTTP2 && https,
            proxy: request.proxy, hostOverride: hostOverride(for: request))
    }

    /// The shared client's settings, changed for `kind`.
    func settings(for kind: ClientKind) throws -> HTTPClient.Configuration {
        var settings = settings
        if kind.http1Only { settings.httpVersion = .http1Only }
        if let proxy = kind.proxy { settings.proxy = try Self.asyncHTTPClientProxy(proxy) }
        if let override = kind.hostOverride { settings.dnsOverride[override.host] = override.address }
        return settings
    }

    /// The `dnsOverride` entry a route to another host needs, when `request` takes one (without a proxy). A client
    /// of its own carries it: AsyncHTTPClient's overrides are per client and per host, and the route may be for
    /// one port only.
    private func hostOverride(for request: TransportRequest) -> HostOverride? {
        // Routes first: without any, every request is spared reading its URL's host here.
        guard !configuration.connectionRoutes.isEmpty, request.proxy == nil, let host = request.url.host,
            let target = ConnectionRoute.target(of: request.url, in: configuration.connectionRoutes),
            target.host != ConnectionRoute.normalized(host)
        else { return nil }
        return HostOverride(host: host, address: configuration.dialOptions.address(for: target.host))
    }

    /// The URL AsyncHTTPClient is given for `request`, and a `Host` field to send: under a route to another port
    /// the URL carries that port (AsyncHTTPClient connects to its URL's port; its host overrides take none) and
    /// `Host` keeps the request's own authority. Otherwise the request's URL and no field.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when the URL cannot take the route's port.
    func clientAddressing(for request: TransportRequest) throws -> (url: URL, hostField: String?) {
        let url = request.url
        guard !configuration.connectionRoutes.isEmpty, request.proxy == nil,
            let target = ConnectionRoute.target(of: url, in: configuration.connectionRoutes),
            target.port != url.port ?? URLCheck.defaultPort(scheme: url.scheme)
        else { return (url, nil) }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = url.host else {
            throw CourierError.invalidURL(url.absoluteString)
        }
        components.port = target.port
        guard let routed = components.url else { throw CourierError.invalidURL(url.absoluteString) }
        if request.headers.contains(where: { $0.name.caseInsensitiveEquals("Host") }) { return (routed, nil) }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let port = url.port.flatMap { $0 == URLCheck.defaultPort(scheme: url.scheme) ? nil : $0 }
        return (routed, port.map { "\(bracketed):\($0)" } ?? bracketed)
    }

    /// AsyncHTTPClient's form of `proxy`.
    ///
    /// - Throws: ``CourierError/proxyFailed(proxy:authentication:reason:underlyingError:context:)`` for a SOCKS5
    ///   proxy with credentials: AsyncHTTPClient's SOCKS client offers none.
    static func asyncHTTPClientProxy(_ proxy: Proxy) throws -> HTTPClient.Configuration.Proxy {
        switch proxy.kind {
        case .http:
            let authorization = proxy.username.map {
                HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "")
            }
            return .server(host: proxy.host, port: proxy.port, authorization: authorization)
        case .socks5:
            guard proxy.username == nil else {
                throw CourierError.proxyFailed(
                    proxy: proxy.endpoint, authentication: true,
                    reason: "NIOTransport sends no user name and password to a SOCKS5 proxy (AsyncHTTPClient's SOCKS "
                        + "client has no authentication); use an HTTP proxy, or a SOCKS5 proxy without them",
                    underlyingError: nil, context: CourierError.Context())
            }
            return .socksServer(host: proxy.host, port: proxy.port)
        }
    }

    /// The TLS profile of the own connections for `request`'s policy and HTTP version.
    ///
    /// - Throws: ``CourierError/requestFailed(underlyingError:context:)`` when the policy's client certificate
    ///   cannot be read.
    func tlsProfile(for request: TransportRequest) throws -> NIOTLSProfile {
        let key = TLSProfiles.Key(
            policy: request.securityPolicy,
            offersHTTP2: configuration.allowsHTTP2 && request.httpVersion != .http1Only)
        return try tlsProfiles.withLock { profiles in
            if let last = profiles.last, last.key == key { return last.profile }
            let profile =
                try profiles.byKey[key]
                ?? NIOTLSProfile(
                    policy: key.policy, base: configuration.baseTLS, offersHTTP2: key.offersHTTP2)
            profiles.byKey[key] = profile
            profiles.last = (key, profile)
            return profile
        }
    }

    /// The trust gate `request` goes through, made on first use; `nil` when the shared client will do.
    func trustGate(for request: TransportRequest) throws -> NIOTrustGate? {
        // The scheme first: comparing policies is the costlier check, and plain http has no policy to enforce.
        guard URLCheck.isHTTPS(request.url), !request.securityPolicy.isDefault else { return nil }
        guard let host = request.url.host, !host.isEmpty else {
            throw CourierError.invalidURL(request.url.absoluteString)
        }
        let key = NIOTrustGate.Key(
            host: host.lowercased(), port: request.url.port ?? 443, policy: request.securityPolicy,
            client: try clientKind(for: request))
        return try gates.withLock { gates in
            // Comparing with the last gate used is cheaper than hashing the key's policy, certificates and all.
            if let last = gates.last, last.key == key { return last }
            if let gate = gates.byKey[key] {
                gates.last = gate
                return gate
            }
            let settings = try settings(for: key.client)
            let gate = try NIOTrustGate(
                key: key, baseSettings: settings, baseTLS: configuration.baseTLS,
                dialOptions: configuration.dialOptions,
                group: group,
                connectTimeout: .milliseconds(CheckedConversion.milliseconds(configuration.connectTimeout)))
            gates.byKey[key] = gate
            gates.last = gate
            return gate
        }
    }
}

/// The transport's trust gates, one per origin and policy, and the one used last.
struct TrustGates {
    var byKey: [NIOTrustGate.Key: NIOTrustGate] = [:]
    var last: NIOTrustGate?
}

/// The TLS profiles of the transport's own connections, one per policy and HTTP version choice, with the last one
/// used first (comparing policies costs less than hashing them).
struct TLSProfiles {
    struct Key: Hashable {
        var policy: SecurityPolicy
        var offersHTTP2: Bool
    }

    var byKey: [Key: NIOTLSProfile] = [:]
    var last: (key: Key, profile: NIOTLSProfile)?
}
