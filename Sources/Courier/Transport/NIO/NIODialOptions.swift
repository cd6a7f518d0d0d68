import NIOCore
import NIOPosix

/// Where ``NIOTransport``'s own connections (its pool, WebSockets, the trust gate's probe) connect and from which
/// local address, as ``NIOTransport/Configuration/connectionRoutes``, ``NIOTransport/Configuration/hostAddresses``
/// and ``NIOTransport/Configuration/localAddress`` say, so that they go where AsyncHTTPClient's connections go.
struct NIODialOptions: Sendable {
    var routes: [NIOTransport.ConnectionRoute] = []
    var hostAddresses: [String: String] = [:]
    var localAddress: String?

    /// The host or address to connect to for a host: its override, or the host itself.
    func address(for host: String) -> String {
        hostAddresses[host] ?? hostAddresses[host.lowercased()] ?? host
    }

    /// The host or address and the port to connect to for an origin's `host` and `port`: the first route that
    /// matches them, then the target host's address.
    func target(host: String, port: Int) -> (host: String, port: Int) {
        guard !routes.isEmpty, let routed = NIOTransport.ConnectionRoute.target(host: host, port: port, in: routes)
        else { return (address(for: host), port) }
        return (address(for: routed.host), routed.port)
    }

    /// `bootstrap`, bound to the local address when there is one.
    ///
    /// - Throws: ``CourierError/requestFailed(underlyingError:context:)`` when the local address is not an IP address.
    func apply(to bootstrap: ClientBootstrap) throws -> ClientBootstrap {
        guard let localAddress else { return bootstrap }
        do {
            return bootstrap.bind(to: try SocketAddress(ipAddress: localAddress, port: 0))
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
    }
}
