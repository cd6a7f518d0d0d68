import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The TLS pieces of a connection made under a ``SecurityPolicy`` outside AsyncHTTPClient's pool: the pool's own
/// connections (``NIOTLSProfile``), the trust gate's probe (``NIOTrustGate``) and WebSocket connections
/// (``NIOWebSocketConnector``).
enum NIOPolicyTLS {
    /// `base` (the transport's TLS versions and cipher suites), presenting `policy`'s client certificate, if it has
    /// one.
    ///
    /// - Throws: ``CourierError/requestFailed(underlyingError:context:)`` when the certificate cannot be read.
    static func clientConfiguration(
        for policy: SecurityPolicy, base: TLSConfiguration = .makeClientConfiguration()
    ) throws -> TLSConfiguration {
        var tls = base
        do {
            if let identity = try policy.clientCertificate?.makeNIOSSLIdentity() {
                tls.certificateChain = identity.chain.map { .certificate($0) }
                tls.privateKey = .privateKey(identity.key)
            }
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
        return tls
    }

    /// The name to send as SNI for `host`: none for an IP address.
    static func serverName(for host: String) -> String? {
        IPAddress.bytes(host) == nil ? host : nil
    }

    /// NIOSSL's verification callback (it replaces NIOSSL's own checks) that evaluates `policy` over the peer's
    /// chain for `host` and hands each evaluation, with the chain (leaf first, DER), to `record`. A chain for which
    /// `accepted` says yes passes without an evaluation.
    static func verificationCallback(
        policy: SecurityPolicy, host: String, eventLoop: any EventLoop,
        accepted: (@Sendable ([Data]) -> Bool)? = nil,
        record: @escaping @Sendable (TrustEvaluation, [Data]) -> Void
    ) -> NIOSSLCustomVerificationCallback {
        { certificates, promise in
            let chain = certificates.compactMap { try? Data($0.toDERBytes()) }
            if let accepted, accepted(chain) { return promise.succeed(.certificateVerified) }
            // Evaluating may read and parse the system's roots (seconds in a debug build, file I/O in any): never
            // on the event loop, which serves every other connection too.
            NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
                policy.evaluation(of: ServerTrust(certificateChain: chain), forDomain: host)
            }.whenComplete { result in
                switch result {
                case .success(let evaluation):
                    record(evaluation, chain)
                    promise.succeed(evaluation.isTrusted ? .certificateVerified : .failed)
                case .failure:
                    promise.succeed(.failed)
                }
            }
        }
    }
}
