import Foundation

/// A closure that decides whether to trust a server instead of a ``SecurityPolicy``, carried inside the policy a
/// transport applies (see ``SecurityPolicy/serverTrustHook``); a session makes one from
/// ``SessionHooks/serverTrust``.
///
/// Equal and hashed by identity, so transports that keep state per policy (``NIOTransport``'s trust gates) keep it
/// per hook.
public final class ServerTrustHook: Sendable, Hashable {
    /// The decision, given the host and the chain the server presented (DER, leaf first).
    public let decide: @Sendable (_ host: String, _ certificates: [Data]) -> ServerTrustDisposition

    /// Wraps `decide`.
    public init(_ decide: @escaping @Sendable (_ host: String, _ certificates: [Data]) -> ServerTrustDisposition) {
        self.decide = decide
    }

    /// The same object.
    public static func == (lhs: ServerTrustHook, rhs: ServerTrustHook) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// How ``SessionHooks/serverTrust`` answers a server's certificate chain.
public enum ServerTrustDisposition: Sendable, Hashable {
    /// Let the session's ``SecurityPolicy`` decide, as without the hook.
    case useSecurityPolicy
    /// Trust the server.
    case accept
    /// Refuse the server: the request fails with ``CourierError/serverTrustEvaluationFailed(host:reason:)`` (-1202).
    case reject
}
