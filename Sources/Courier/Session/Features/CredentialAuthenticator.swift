import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A credential an ``AuthenticationInterceptor`` applies to requests (Alamofire's `AuthenticationCredential`).
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential should be refreshed before it is used again (it expires within a few minutes, say):
    /// the interceptor then refreshes it before sending, instead of waiting for a 401.
    var requiresRefresh: Bool { get }
}

/// How an ``AuthenticationInterceptor`` uses, refreshes and recognises one kind of credential (Alamofire's
/// `CredentialAuthenticator`).
public protocol CredentialAuthenticator: Sendable {
    /// The credential's type: an OAuth token pair, an API key…
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` on `request` (an `Authorization` header, usually).
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// A fresh credential in place of `credential`. The interceptor runs one refresh at a time, whatever the number
    /// of requests waiting for it.
    func refresh(_ credential: Credential, for task: SessionTask) async throws -> Credential

    /// Whether `request` failed with `response` because it was not authenticated (a 401, usually), rather than for
    /// another reason.
    func didRequest(
        _ request: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError
    )
        -> Bool

    /// Whether `request` was sent with `credential`: when it was not (it went out before a refresh finished), it
    /// is retried at once with the current credential, without another refresh.
    func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool
}

/// Why an ``AuthenticationInterceptor`` failed a request.
public enum AuthenticationError: Error, Sendable, Hashable {
    /// The interceptor has no credential to apply.
    case missingCredential
    /// More refreshes than the ``AuthenticationInterceptor/RefreshWindow`` allows: the refreshed credential keeps
    /// being refused, and refreshing again would loop.
    case excessiveRefresh
}
