import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an `async` call returns: the exchange and the serialized value.
public struct DataResponse<Value: Sendable>: Sendable {
    /// When the call started and ended.
    public struct Metrics: Sendable, Hashable {
        /// When the call was made.
        public var start: Date
        /// When the value was ready.
        public var end: Date
        /// `end - start`, in seconds.
        public var duration: TimeInterval { end.timeIntervalSince(start) }
    }

    /// The last request sent (after redirects); for a plain `async` call, made on first use.
    public var request: URLRequest {
        get {
            switch origin {
            case .request(let request): request
            case .task(let task): task.currentRequest ?? URLRequest(url: head.url)
            }
        }
        set { origin = .request(newValue) }
    }
    /// Where ``request`` comes from.
    private var origin: Origin

    private enum Origin: Sendable {
        case request(URLRequest)
        /// The task that sent it, which makes its `URLRequest` when asked.
        case task(SessionTask)
    }
    /// The HTTP response, made from the transport's head on first use (see ``statusCode`` for the cheap read).
    public var response: HTTPURLResponse {
        get { head.response ?? Self.placeholder(for: head) }
        set { head = ResponseHead(newValue) }
    }
    /// The head as the transport delivered it.
    private var head: ResponseHead
    /// The raw body.
    public var data: Data
    /// The serialized body.
    public var value: Value
    /// Timings.
    public var metrics: Metrics
    /// What the task took, exchange by exchange (`URLSessionTaskMetrics`' shape); `nil` for a response that no task
    /// made.
    public var taskMetrics: TaskMetrics?

    /// The status code.
    public var statusCode: Int { head.statusCode }
    /// The HTTP version the response came with: `HTTP/1.1`, `HTTP/1.0` or `HTTP/2` (see
    /// ``SessionConfiguration/httpVersion``).
    public var httpVersion: String { head.httpVersion }

    private init(origin: Origin, head: ResponseHead, data: Data, value: Value, metrics: Metrics) {
        (self.origin, self.head, self.data) = (origin, head, data)
        (self.value, self.metrics) = (value, metrics)
    }

    init(request: URLRequest, head: ResponseHead, data: Data, value: Value, metrics: Metrics) {
        self.init(origin: .request(request), head: head, data: data, value: value, metrics: metrics)
    }

    /// A response whose request is the one `task` sent last, made only when asked for.
    init(task: SessionTask, head: ResponseHead, data: Data, value: Value, metrics: Metrics) {
        self.init(origin: .task(task), head: head, data: data, value: value, metrics: metrics)
        taskMetrics = task.metrics
    }

    init(request: URLRequest, response: HTTPURLResponse, data: Data, value: Value, metrics: Metrics) {
        self.init(request: request, head: ResponseHead(response), data: data, value: value, metrics: metrics)
    }

    /// Foundation refuses no head the session accepted (corelibs never returns `nil`, Apple's only for a status it
    /// cannot represent); if it ever does, the status and URL survive without the header fields.
    private static func placeholder(for head: ResponseHead) -> HTTPURLResponse {
        if let bare = HTTPURLResponse(url: head.url, statusCode: head.statusCode, httpVersion: nil, headerFields: nil) {
            return bare
        }
        guard let ok = HTTPURLResponse(url: head.url, statusCode: 200, httpVersion: nil, headerFields: nil) else {
            preconditionFailure("Foundation refused to make a bare 200 response")  // constant arguments: unreachable
        }
        return ok
    }
}
