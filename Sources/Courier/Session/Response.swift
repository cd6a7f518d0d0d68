import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an `async` call returns: the exchange and the serialized value.
public struct Response<Value: Sendable>: Sendable {
    /// When the call started and ended.
    public struct Metrics: Sendable, Hashable {
        /// When the call was made.
        public var start: Date
        /// When the value was ready.
        public var end: Date
        /// `end - start`, in seconds.
        public var duration: TimeInterval { end.timeIntervalSince(start) }
    }

    /// The last request sent (after redirects).
    public var request: URLRequest
    /// The HTTP response.
    public var response: HTTPURLResponse
    /// The raw body.
    public var data: Data
    /// The serialized body.
    public var value: Value
    /// Timings.
    public var metrics: Metrics

    /// The status code.
    public var statusCode: Int { response.statusCode }
}
