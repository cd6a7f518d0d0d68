import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries a request that failed because the network was gone, once it is back (Alamofire 5.11's
/// `OfflineRetrier`), waiting at most ``maximumWait``.
///
/// ```swift
/// var configuration = SessionConfiguration.default
/// configuration.interceptor = OfflineRetrier(maximumWait: .seconds(10))
/// ```
///
/// A failure counts as offline when its code is in ``offlineErrorCodes`` and the network is not reachable when the
/// retrier asks (a refused connection while the network is up is the server's answer, not an outage). The retrier
/// then waits for a reachable status: the request goes out again as soon as one comes, and the failure stands if
/// none comes within ``maximumWait``. A request is retried at most ``retryLimit`` times this way, and a request that
/// may have gone out before the failure (a timeout, a connection lost) only when its method is idempotent.
///
/// On Linux a lost route makes a connection fail with "cannot connect to host" (-1004) rather than "not connected
/// to the internet" (-1009), which is why both are in the default codes. Combine it with ``RetryPolicy`` in an
/// ``Interceptor`` for failures that are not outages.
public struct OfflineRetrier: RequestInterceptor {
    /// Alamofire's: 5 s.
    public static let defaultMaximumWait = Duration.seconds(5)
    /// Codes a lost network gives: timed out (-1001), cannot find host (-1003), cannot connect to host (-1004),
    /// connection lost (-1005), DNS lookup failed (-1006), not connected to the internet (-1009).
    public static let defaultOfflineErrorCodes: Set<Int> = [-1001, -1003, -1004, -1005, -1006, -1009]

    /// How long to wait for the network to come back.
    public var maximumWait: Duration
    /// The error codes that can mean the network is gone.
    public var offlineErrorCodes: Set<Int>
    /// How many times one request is retried for an outage.
    public var retryLimit: Int
    private let statuses: @Sendable () -> AsyncStream<ReachabilityStatus>

    /// A retrier that watches `reachability` (started when the first failure asks, if it is not already).
    ///
    /// - Parameters:
    ///   - reachability: The manager whose status tells that the network is back; by default the shared one,
    ///     which watches any route to the internet.
    ///   - maximumWait: How long to wait for the network.
    ///   - offlineErrorCodes: The error codes that can mean the network is gone.
    ///   - retryLimit: How many times one request is retried for an outage (3 by default).
    public init(
        reachability: ReachabilityManager = .shared, maximumWait: Duration = Self.defaultMaximumWait,
        offlineErrorCodes: Set<Int> = Self.defaultOfflineErrorCodes, retryLimit: Int = 3
    ) {
        self.init(maximumWait: maximumWait, offlineErrorCodes: offlineErrorCodes, retryLimit: retryLimit) {
            reachability.startMonitoring()
            return reachability.statusUpdates
        }
    }

    /// A retrier reading the network's status from `statuses`: each call returns a sequence whose first element is
    /// the current status (when it is known), then each change, as ``ReachabilityManager/statusUpdates`` does. For
    /// another source of connectivity, or a test that decides when the network is back.
    public init(
        maximumWait: Duration = Self.defaultMaximumWait, offlineErrorCodes: Set<Int> = Self.defaultOfflineErrorCodes,
        retryLimit: Int = 3, statuses: @escaping @Sendable () -> AsyncStream<ReachabilityStatus>
    ) {
        self.maximumWait = maximumWait
        self.offlineErrorCodes = offlineErrorCodes
        self.retryLimit = retryLimit
        self.statuses = statuses
    }

    /// ``RetryResult/retry`` once the network is back, after an offline failure; otherwise
    /// ``RetryResult/doNotRetry``.
    public func retry(
        _ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?
    ) async -> RetryResult {
        guard response == nil, task.retryCount < retryLimit, offlineErrorCodes.contains(error.errorCode) else {
            return .doNotRetry
        }
        // A request that may have gone out (timed out, connection lost) is sent again only if sending it twice is
        // harmless.
        let method = (request.httpMethod ?? "GET").uppercased()
        guard Self.neverSentCodes.contains(error.errorCode) || RetryPolicy.defaultRetryableHTTPMethods.contains(method)
        else { return .doNotRetry }
        return await networkReturned() ? .retry : .doNotRetry
    }

    /// Codes of failures before a connection was made: the request never left.
    static let neverSentCodes: Set<Int> = [-1003, -1004, -1006, -1009]

    /// Whether the network, unreachable now, becomes reachable within ``maximumWait``. `false` at once when it is
    /// reachable now: the failure was not an outage.
    private func networkReturned() async -> Bool {
        let statuses = statuses
        let maximumWait = maximumWait
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var isFirst = true
                for await status in statuses() {
                    if status.isReachable { return !isFirst }
                    isFirst = false
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: maximumWait)
                return false
            }
            let returned = await group.next() ?? false
            group.cancelAll()
            return returned
        }
    }
}
