import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP authentication challenge: a `401` with `WWW-Authenticate`.
public struct AuthenticationChallenge: Sendable {
    /// `Basic` or `Digest`, as the server wrote it.
    public var scheme: String
    /// The challenge's parameters (`realm`, `nonce`, `qop`, …), names lower-cased.
    public var parameters: [String: String]
    /// How many times this task has already answered a challenge.
    public var previousFailureCount: Int
    /// The `401` response.
    public var response: HTTPURLResponse

    /// The realm, when given.
    public var realm: String? { parameters["realm"] }
}

/// How to answer an ``AuthenticationChallenge``.
public enum AuthenticationDisposition: Sendable {
    /// Retry with these credentials.
    case useCredential(Credential)
    /// Use ``SessionConfiguration/credential`` on the first challenge, otherwise deliver the `401`.
    case performDefaultHandling
    /// Deliver the `401` response as it is.
    case rejectProtectionSpace
    /// Cancel the task.
    case cancelAuthenticationChallenge
}
