import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes or rejects a request before it is sent: the first time, and again before every retry and every
/// redirect (Alamofire's `RequestAdapter`). Adding a credential, signing, or refusing to send are its uses.
public protocol RequestAdapter: Sendable {
    /// The request to send instead of `request`, which `task` is about to send.
    ///
    /// - Throws: any error to fail the task with instead of sending; a thrown error that is not a ``CourierError``
    ///   becomes ``CourierError/requestFailed(underlyingError:context:)``, and the task's retriers are asked about it.
    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest

    /// Whether ``adapt(_:for:)`` may change or refuse a request; default `true`. `false` promises that it returns
    /// every request unchanged, so the session skips the call and keeps its fast path (a request without a body
    /// starts before its task is set up, and no `URLRequest` is made for it).
    var adaptsRequests: Bool { get }
}

extension RequestAdapter {
    /// `true`: the adapter is called.
    public var adaptsRequests: Bool { true }
}

/// What to do after a request failed (Alamofire's `RetryResult`).
public enum RetryResult: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after `delay`.
    case retryWithDelay(Duration)
    /// Let the failure stand.
    case doNotRetry
    /// Fail with this error instead.
    case doNotRetryWithError(any Error)
}

/// Decides whether a failed request is sent again (Alamofire's `RequestRetrier`).
///
/// A request fails when the transport fails before a response arrives (it could not connect, the connection was
/// lost, the request timed out…), or when the response's status is 400 or more or one the task's response
/// serializer will not accept: then `error` is ``CourierError/unacceptableStatusCode(_:context:underlyingError:)``
/// and the response's body has not been read yet; it is read and dropped before a retry. A failure while the body
/// is read is not retried.
public protocol RequestRetrier: Sendable {
    /// Whether `task`'s `request`, which failed with `error` (and `response`, when one arrived), should be sent again.
    /// ``SessionTask/retryCount`` tells how many times it already was.
    func retry(_ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?)
        async -> RetryResult
}

/// Both a ``RequestAdapter`` and a ``RequestRetrier`` (Alamofire's `RequestInterceptor`). Each half defaults to
/// doing nothing, so a type can implement the one it needs.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Sends `request` as it is.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest { request }

    /// Does not retry.
    public func retry(
        _ request: URLRequest, for task: SessionTask, dueTo error: CourierError, response: HTTPURLResponse?
    ) async -> RetryResult { .doNotRetry }
}
