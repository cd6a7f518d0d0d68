import Foundation
import NIOCore
import NIOSSL

/// How ``NIOHTTP1Pool``'s connections to `https` origins make TLS under one ``SecurityPolicy``: its NIOSSL context
/// (made once, the costly part), the protocols it offers, and the chains it has accepted.
///
/// Under the default policy NIOSSL verifies the chain against the system's roots and the host name itself, as
/// AsyncHTTPClient does. Under any other, the policy is evaluated over the whole chain inside the handshake (NIOSSL's
/// custom verification callback, on NIO's thread pool), so a refused server never receives a byte of the request,
/// and no probe connection is needed. A chain the policy accepted for a host is remembered: the pool's other
/// connections to that host present the same chain and are accepted without evaluating it again.
///
/// Profiles are compared by identity: the transport keeps one per policy and HTTP version choice.
final class NIOTLSProfile: Sendable, Hashable {
    /// `nil` for the default policy.
    let policy: SecurityPolicy?
    /// Whether ALPN offers `h2` before `http/1.1`.
    let offersHTTP2: Bool
    private let context: NIOSSLContext
    /// Accepted chains per host, bounded: a process that talks to many hosts keeps the most recent.
    private let accepted = Locked([String: Set<[Data]>]())

    /// - Throws: ``CourierError/requestFailed(underlyingError:context:)`` when the policy's client certificate
    ///   cannot be read or NIOSSL refuses the configuration.
    init(policy: SecurityPolicy, base: TLSConfiguration, offersHTTP2: Bool) throws {
        self.policy = policy.isDefault ? nil : policy
        self.offersHTTP2 = offersHTTP2
        var tls = try NIOPolicyTLS.clientConfiguration(for: policy, base: base)
        tls.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        // With a policy, the callback replaces NIOSSL's checks; NIOSSL calls it only when verification is on.
        if !policy.isDefault { tls.certificateVerification = .fullVerification }
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
    }

    /// The TLS handler of a new connection to `host`; `record` gets the policy's evaluation when one is made.
    func handler(
        host: String, eventLoop: any EventLoop, record: @escaping @Sendable (TrustEvaluation) -> Void
    ) throws -> NIOSSLClientHandler {
        let serverName = NIOPolicyTLS.serverName(for: host)
        guard let policy else { return try NIOSSLClientHandler(context: context, serverHostname: serverName) }
        let accepted = accepted
        return try NIOSSLClientHandler(
            context: context, serverHostname: serverName,
            customVerificationCallback: NIOPolicyTLS.verificationCallback(
                policy: policy, host: host, eventLoop: eventLoop,
                accepted: { chain in accepted.withLock { $0[host]?.contains(chain) ?? false } }
            ) { evaluation, chain in
                record(evaluation)
                accepted.withLock { hosts in
                    guard evaluation.isTrusted else {
                        hosts[host] = nil  // a refusal means the next connection is evaluated afresh
                        return
                    }
                    if hosts[host] == nil, hosts.count >= 64 { hosts.removeAll(keepingCapacity: true) }
                    if (hosts[host]?.count ?? 0) >= 8 { hosts[host] = [] }
                    hosts[host, default: []].insert(chain)
                }
            })
    }

    static func == (lhs: NIOTLSProfile, rhs: NIOTLSProfile) -> Bool { lhs === rhs }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
