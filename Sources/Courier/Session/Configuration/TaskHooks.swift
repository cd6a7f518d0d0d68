import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hooks for one request of the `async` API that take the place of the session's (Alamofire's per-request
/// `redirect(using:)`, `cacheResponse(using:)` and `authenticate(with:)`); a hook left `nil` leaves the session's
/// ``SessionHooks`` in force for that request.
///
/// ```swift
/// var once = TaskHooks()
/// once.willPerformRedirection = { _, _, _ in nil }  // this request follows no redirect
/// once.credential = Credential(user: "ada", password: "secret")
/// let response = try await manager.send(request, serializer: HTTPResponseSerializer(), hooks: once)
/// ```
public struct TaskHooks: Sendable {
    /// Replaces ``SessionHooks/willPerformRedirection`` for this request.
    public var willPerformRedirection: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> URLRequest?)?
    /// Replaces ``SessionHooks/willCacheResponse`` for this request.
    public var willCacheResponse: (@Sendable (DataTask, CachedURLResponse) -> CachedURLResponse?)?
    /// Replaces ``SessionHooks/authenticationChallenge`` for this request.
    public var authenticationChallenge: (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationDisposition)?
    /// Replaces ``SessionHooks/serverTrust`` for this request's HTTPS connections (AFNetworking's task-level
    /// challenge block, for server trust): it decides, given the host and the chain, before any byte of the request
    /// is sent. Called by transports that see the chain (``NIOTransport``). Such a request uses connections of its
    /// own, never one another hook (or none) let through.
    public var serverTrust: (@Sendable (_ host: String, _ certificates: [Data]) -> ServerTrustDisposition)?
    /// The certificate this request presents when an HTTPS server asks for one (AFNetworking's task-level
    /// challenge block, for a client certificate), instead of its security policy's
    /// ``SecurityPolicy/clientCertificate``. Such a request uses connections of its own.
    public var clientCertificate: ClientCertificate?
    /// Replaces ``SessionHooks/needNewBodyStream`` for this request.
    public var needNewBodyStream: (@Sendable (SessionTask) -> HTTPRequestBody?)?
    /// Monitors of this request alone, told of its events after the session's ``SessionConfiguration/eventMonitors``
    /// (which still hear them), each on its own queue.
    public var eventMonitors: [any EventMonitor] = []
    /// Replaces ``SessionConfiguration/credential`` for this request (under the same rules: its own schemes, the
    /// request's origin or the credential's protection space).
    public var credential: Credential?

    /// No replacement: the session's hooks.
    public init() {}

    /// Whether any hook is set.
    var isEmpty: Bool {
        willPerformRedirection == nil && willCacheResponse == nil && authenticationChallenge == nil
            && needNewBodyStream == nil && credential == nil && eventMonitors.isEmpty && serverTrust == nil
            && clientCertificate == nil
    }

    /// The session's `hooks` with these in their place.
    func replacing(in hooks: SessionHooks) -> SessionHooks {
        var merged = hooks
        if let willPerformRedirection { merged.willPerformRedirection = willPerformRedirection }
        if let willCacheResponse { merged.willCacheResponse = willCacheResponse }
        if let authenticationChallenge { merged.authenticationChallenge = authenticationChallenge }
        if let needNewBodyStream { merged.needNewBodyStream = needNewBodyStream }
        return merged
    }
}
