import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries idempotent requests that failed for a reason a second try can cure, with exponential backoff
/// (Alamofire's `RetryPolicy`, with its defaults), honouring `Retry-After`, with optional jitter and a budget.
///
/// ```swift
/// var configuration = SessionConfiguration.default
/// configuration.interceptor = RetryPolicy()  // 2 retries, after 0.5 s and 1 s
/// ```
///
/// A failed request is retried when all of these hold:
/// - it has been retried fewer than ``retryLimit`` times;
/// - its method is in ``retryableHTTPMethods`` (the idempotent ones: DELETE, GET, HEAD, OPTIONS, PUT, TRACE);
/// - the response's status is in ``retryableHTTPStatusCodes`` (408, 429, 500, 502, 503, 504), or, without a response,
///   the error's code is in ``retryableErrorCodes`` (timed out, cannot find or connect to the host, connection lost,
///   DNS failure, not connected, bad server response, secure connection failed…);
/// - the ``budget``, when there is one, has a retry left.
///
/// The delay before retry *n* (counting from 0) is ``exponentialBackoffScale`` × ``exponentialBackoffBase``^*n*:
/// 0.5 s, then 1 s. A `Retry-After` header (seconds, or an HTTP date) replaces it when longer; one longer than
/// ``maximumRetryAfter`` means the request is not retried (waiting less than the server asked is pointless). With
/// ``jitter`` *j*, the delay is multiplied by a random factor in 1 − *j* … 1 + *j*.
public struct RetryPolicy: RequestInterceptor {
    /// Alamofire's: 2.
    public static let defaultRetryLimit = 2
    /// Alamofire's: 2.
    public static let defaultExponentialBackoffBase = 2
    /// Alamofire's: 0.5 s.
    public static let defaultExponentialBackoffScale = 0.5
    /// The idempotent methods (RFC 9110 §9.2.2) but CONNECT and PATCH: DELETE, GET, HEAD, OPTIONS, PUT, TRACE.
    public static let defaultRetryableHTTPMethods: Set<String> = ["DELETE", "GET", "HEAD", "OPTIONS", "PUT", "TRACE"]
    /// 408, 429, 500, 502, 503, 504: Alamofire's list and, as curl's `--retry` has it, 429 Too Many Requests, whose
    /// `Retry-After` says when to come back.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// `NSURLErrorDomain` codes a retry can cure: backgroundSessionWasDisconnected (-997), timedOut (-1001),
    /// cannotFindHost (-1003), cannotConnectToHost (-1004), networkConnectionLost (-1005), dnsLookupFailed
    /// (-1006), notConnectedToInternet (-1009), badServerResponse (-1011, but not a status the serializer refused),
    /// secureConnectionFailed (-1200), callIsActive (-1019), dataNotAllowed (-1020), internationalRoamingOff
    /// (-1018), and -1 (a transport failure Courier could not classify, such as a connection reset).
    public static let defaultRetryableErrorCodes: Set<Int> = [
        -997, -1001, -1003, -1004, -1005, -1006, -1009, -1011, -1200, -1019, -1020, -1018, -1,
    ]

    /// How many times a request is retried at most.
    public var retryLimit: Int
    /// The base of the exponential backoff.
    public var exponentialBackoffBase: Int
    /// The delay of the first retry, in seconds.
    public var exponentialBackoffScale: Double
    /// Methods that are retried (upper case).
    public var retryableHTTPMethods: Set<String>
    /// Statuses that are retried.
    public var retryableHTTPStatusCodes: Set<Int>
    /// Error codes that are retried when no response arrived (see ``CourierError/errorCode``).
    public var retryableErrorCodes: Set<Int>
    /// The longest `Retry-After` honoured; default 60 s.
    public var maximumRetryAfter: Duration
    /// The fraction the delay may vary by at random, in 0…1; default 0.
    public var jitter: Double
    /// Shared by the requests of a session so that a failing server is not hammered; `nil` for none.
    public var budget: RetryBudget?

    /// A policy; the defaults are Alamofire's, with no jitter and no budget.
    public init(
        retryLimit: Int = defaultRetryLimit,
        exponentialBackoffBase: Int = defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<String> = defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = defaultRetryableHTTPStatusCodes,
        retryableErrorCodes: Set<Int> = defaultRetryableErrorCodes,
        maximumRetryAfter: Duration = .seconds(60),
        jitter: Double = 0,
        budget: RetryBudget? = nil
    ) {
        self.retryLimit = max(0, retryLimit)
        self.exponentialBackoffBase = max(1, exponentialBackoffBase)
        self.exponentialBackoffScale = exponentialBackoffScale.isFinite ? max(0, exponentialBackoffScale) : 0
        self.retryableHTTPMethods = Set(retryableHTTPMethods.map { $0.uppercased() })
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
        self.maximumRetryAfter = maximumRetryAfter
        self.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0
        self.budget = budget
    }

    /// Only with a ``budget``, which counts the requests.
    public var adaptsRequests: Bool { budget != nil }

    /// Counts the request against the ``budget``.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        if task.retryCount == 0 { budget?.recordRequest() }
        return request
    }

    public func retry(
        _ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?
    ) async -> RetryResult {
        guard let delay = delay(for: request, attempt: task.retryCount, error: error, response: response),
            budget?.withdraw() ?? true
        else { return .doNotRetry }
        return .retryWithDelay(delay)
    }

    /// The delay before retrying, or `nil` when `request` is not to be retried after `attempt` retries.
    public func delay(
        for request: URLRequest, attempt: Int, error: CourierError, response: HTTPURLResponse?, now: Date = Date()
    ) -> Duration? {
        guard attempt < retryLimit, retryableHTTPMethods.contains((request.httpMethod ?? "GET").uppercased())
        else { return nil }
        // As Alamofire's: a retryable status, or a retryable error (also one after the head, e.g. a connection lost
        // while a download's body arrived).
        let statusIsRetryable = response.map { retryableHTTPStatusCodes.contains($0.statusCode) } ?? false
        let errorIsRetryable: Bool
        if case .unacceptableStatusCode = error {
            errorIsRetryable = false
        } else {
            errorIsRetryable = retryableErrorCodes.contains(error.errorCode)
        }
        guard statusIsRetryable || errorIsRetryable else { return nil }
        let exponent = min(attempt, 62)
        var seconds = exponentialBackoffScale * pow(Double(exponentialBackoffBase), Double(exponent))
        if let response, let retryAfter = Self.retryAfter(response, now: now) {
            guard retryAfter <= maximumRetryAfter else { return nil }
            seconds = max(seconds, Double(retryAfter.components.seconds))
        }
        if jitter > 0 { seconds *= Double.random(in: (1 - jitter)...(1 + jitter)) }
        guard seconds.isFinite else { return nil }
        return .milliseconds(Int64(min(seconds, 86_400) * 1000))
    }

    /// The response's `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date; `nil` when absent or
    /// unreadable. A date in the past is zero.
    public static func retryAfter(_ response: HTTPURLResponse, now: Date = Date()) -> Duration? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return Int64(value).map { .seconds($0) } ?? .seconds(Int64.max / 1_000_000_000_000)
        }
        guard let date = HTTPCaching.parseDate(value) else { return nil }
        return .seconds(Int64(max(0, date.timeIntervalSince(now)).rounded(.up)))
    }
}
