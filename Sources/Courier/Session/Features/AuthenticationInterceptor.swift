import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Applies a credential to every request and refreshes it when it expires or the server refuses it (Alamofire's
/// `AuthenticationInterceptor`).
///
/// ```swift
/// let interceptor = AuthenticationInterceptor(
///     authenticator: OAuthAuthenticator(refreshTokens: tokenEndpoint), credential: stored)
/// configuration.interceptor = Interceptor(interceptors: [interceptor, RetryPolicy()])
/// ```
///
/// - Before a request is sent, the credential is applied; one that ``AuthenticationCredential/requiresRefresh`` is
///   refreshed first.
/// - When requests fail because they were not authenticated (``CredentialAuthenticator/didRequest(_:with:failDueToAuthenticationError:)``),
///   one refresh runs, however many failed at once; every one of them waits for it and is retried with the new
///   credential. A request that went out with an older credential is retried at once, without another refresh.
/// - A refresh that fails fails every request waiting for it, with its error, and every later request refused with
///   the same credential, without another refresh, until ``credential`` is set again.
/// - More than ``RefreshWindow/maximumAttempts`` refreshes within ``RefreshWindow/interval`` fail with
///   ``AuthenticationError/excessiveRefresh``.
public final class AuthenticationInterceptor<A: CredentialAuthenticator>: RequestInterceptor {
    /// How many refreshes may run within a time, before refreshing is taken to loop.
    public struct RefreshWindow: Sendable, Hashable {
        /// The time refreshes are counted over; default 30 s (Alamofire's).
        public var interval: Duration
        /// The refreshes allowed within ``interval``; default 5 (Alamofire's).
        public var maximumAttempts: Int

        /// A window.
        public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = max(1, maximumAttempts)
        }
    }

    private struct State {
        var credential: A.Credential? {
            didSet { failure = nil }
        }
        var refreshing: Task<A.Credential, any Error>?
        var refreshes: [ContinuousClock.Instant] = []
        /// Why the last refresh of the current credential failed: later failures with that credential fail the
        /// same way instead of refreshing again, until the credential changes.
        var failure: (any Error)?
    }

    /// Uses, refreshes and recognises the credential.
    public let authenticator: A
    /// The limit on refreshes.
    public let refreshWindow: RefreshWindow
    private let state: Locked<State>

    /// An interceptor with `credential` (it can be set later).
    public init(authenticator: A, credential: A.Credential? = nil, refreshWindow: RefreshWindow = RefreshWindow()) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        state = Locked(State(credential: credential))
    }

    /// The credential applied to requests; setting it replaces it (a refresh under way still finishes).
    public var credential: A.Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credential = newValue } }
    }

    /// Applies the credential, refreshed first when it requires it.
    ///
    /// - Throws: ``AuthenticationError/missingCredential``, or the refresh's error.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        guard var credential = credential else { throw AuthenticationError.missingCredential }
        if credential.requiresRefresh { credential = try await refreshed(from: credential, for: task) }
        var request = request
        authenticator.apply(credential, to: &request)
        return request
    }

    /// Retries an authentication failure: at once when the request used an older credential, else after the one
    /// refresh all such failures share.
    public func retry(
        _ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?
    ) async -> RetryResult {
        guard let response, authenticator.didRequest(request, with: response, failDueToAuthenticationError: error),
            let current = credential
        else { return .doNotRetry }
        guard authenticator.isRequest(request, authenticatedWith: current) else { return .retry }
        do {
            _ = try await refreshed(from: current, for: task)
            return .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    /// The credential after the refresh under way, or after a new one when none is.
    private func refreshed(from credential: A.Credential, for task: SessionTask) async throws -> A.Credential {
        let refresh = state.withLock { state -> Task<A.Credential, any Error> in
            if let running = state.refreshing { return running }
            if let failure = state.failure { return Task { throw failure } }
            let now = ContinuousClock.now
            state.refreshes.removeAll { now - $0 > refreshWindow.interval }
            guard state.refreshes.count < refreshWindow.maximumAttempts else {
                return Task { throw AuthenticationError.excessiveRefresh }
            }
            state.refreshes.append(now)
            let authenticator = authenticator
            let running = Task { try await authenticator.refresh(credential, for: task) }
            state.refreshing = running
            return running
        }
        do {
            let fresh = try await refresh.value
            state.withLock { state in
                guard state.refreshing == refresh else { return }
                state.credential = fresh
                state.refreshing = nil
            }
            return fresh
        } catch {
            state.withLock { state in
                guard state.refreshing == refresh else { return }
                state.refreshing = nil
                state.failure = error
            }
            throw error
        }
    }
}
