import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adapters and retriers composed in order (Alamofire's `Interceptor`): every adapter adapts the request the
/// previous one returned; the retriers are asked in turn, and the first that does not answer
/// ``RetryResult/doNotRetry`` decides.
///
/// ```swift
/// configuration.interceptor = Interceptor(adapters: [BearerToken(token: token)], retriers: [RetryPolicy()])
/// ```
public struct Interceptor: RequestInterceptor {
    /// Applied first to last.
    public var adapters: [any RequestAdapter]
    /// Asked first to last.
    public var retriers: [any RequestRetrier]

    /// Composes adapters, retriers and interceptors; each interceptor counts as an adapter after `adapters` and a
    /// retrier after `retriers`.
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Whether any adapter adapts.
    public var adaptsRequests: Bool { adapters.contains { $0.adaptsRequests } }

    /// Runs every adapter in order.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        var request = request
        for adapter in adapters { request = try await adapter.adapt(request, for: task) }
        return request
    }

    /// The first answer other than ``RetryResult/doNotRetry``, or that.
    public func retry(
        _ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?
    ) async -> RetryResult {
        for retrier in retriers {
            let result = await retrier.retry(request, for: task, dueTo: error, response: response)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }
}
