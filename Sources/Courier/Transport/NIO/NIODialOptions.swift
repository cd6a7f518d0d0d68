import NIOCore
import NIOPosix

/// Where ``NIOTransport``'s own connections (its HTTP/1.1 pool, WebSockets, the trust gate's probe) connect and from
/// which local address, as ``NIOTransport/Configuration/hostAddresses`` and
/// ``NIOTransport/Configuration/localAddress`` say, so that they go where AsyncHTTPClient's connections go.
struct NIODialOptions: Sendable {
    var hostAddresses: [String: String] = [:]
    var localAddress: String?

    /// The host or address to connect to for a URL's `host`: its override, or the host itself.
    func address(for host: String) -> String {
        hostAddresses[host] ?? hostAddresses[host.lowercased()] ?? host
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
