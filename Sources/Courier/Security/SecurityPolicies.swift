import Foundation

/// Which ``SecurityPolicy`` applies to which host: one policy for every host, optionally overridden per host
/// (Alamofire's `ServerTrustManager`).
///
/// ```swift
/// var policies = SecurityPolicies(default: .default)
/// policies.hostPolicies["api.example.com"] = pinned
/// policies.allHostsMustBeEvaluated = true  // any other https host fails with -1202
/// try manager.setSecurityPolicies(policies)
/// ```
public struct SecurityPolicies: Sendable, Hashable {
    /// The policy for hosts without their own; AFNetworking's ``SecurityPolicy/default`` by default.
    public var defaultPolicy: SecurityPolicy
    /// Policies by host name (lower-case, as in the URL).
    public var hostPolicies: [String: SecurityPolicy]
    /// When `true`, an `https` request to a host without an entry in ``hostPolicies`` fails with
    /// ``CourierError/serverTrustEvaluationFailed(host:reason:)`` instead of using ``defaultPolicy``.
    public var allHostsMustBeEvaluated: Bool

    /// Creates the table.
    public init(
        default defaultPolicy: SecurityPolicy = .default, hostPolicies: [String: SecurityPolicy] = [:],
        allHostsMustBeEvaluated: Bool = false
    ) {
        self.defaultPolicy = defaultPolicy
        self.hostPolicies = hostPolicies
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
    }

    /// The policy for a request to `url`: ``SecurityPolicy/default`` for plain `http` (no TLS, nothing to
    /// evaluate).
    ///
    /// - Throws: ``CourierError/serverTrustEvaluationFailed(host:reason:)`` for an `https` host without a policy
    ///   when ``allHostsMustBeEvaluated`` is `true`.
    public func policy(for url: URL) throws -> SecurityPolicy {
        guard URLCheck.isHTTPS(url) else { return .default }
        let host = (url.host ?? "").lowercased()
        if let policy = hostPolicies[host] { return policy }
        if allHostsMustBeEvaluated {
            throw CourierError.serverTrustEvaluationFailed(
                host: host, reason: "no security policy for this host, and all hosts must be evaluated")
        }
        return defaultPolicy
    }
}
