import Foundation
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's tracing (``SessionConfiguration/tracer``), with swift-distributed-tracing: a client span per task
/// (a child of the caller's `ServiceContext`), and a child span per request the task sends (retries and redirects
/// each get one), whose context is injected into that request's header fields (`traceparent`, with an
/// OpenTelemetry tracer). Attributes use OpenTelemetry's HTTP names: `http.request.method`, `url.full` (query
/// values removed), `server.address`, `server.port`, `http.request.resend_count`, `http.response.status_code`,
/// `error.type`.
///
/// It is both halves of a seam: a ``RequestAdapter`` (run before every send) starts the spans and injects the
/// context, and an ``EventMonitor`` ends them when the task completes. The session installs it only for a tracer
/// that is not the no-op one, so the default costs nothing.
final class RequestTracing: RequestInterceptor, EventMonitor {
    private struct Spans {
        var request: any Span
        var attempt: (any Span)?
        var sent = 0
    }

    let tracer: any Tracer
    private let spans = Locked<[ObjectIdentifier: Spans]>([:])

    init(tracer: any Tracer) {
        self.tracer = tracer
    }

    /// The tracing for `tracer`, or `nil` for none or the no-op tracer.
    static func make(_ tracer: (any Tracer)?) -> RequestTracing? {
        guard let tracer, !(tracer is NoOpTracer) else { return nil }
        return RequestTracing(tracer: tracer)
    }

    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        let method = request.httpMethod ?? "GET"
        let id = ObjectIdentifier(task)
        let (previous, attempt) = spans.withLock { all -> ((any Span)?, any Span) in
            var entry =
                all[id]
                ?? Spans(
                    request: tracer.startSpan(method, context: ServiceContext.current ?? .topLevel, ofKind: .client))
            let previous = entry.attempt
            let attempt = tracer.startSpan(method, context: entry.request.context, ofKind: .client)
            Self.describe(attempt, request: request)
            if entry.sent > 0 { attempt.attributes["http.request.resend_count"] = entry.sent }
            if entry.sent == 0 { Self.describe(entry.request, request: request) }
            entry.sent += 1
            entry.attempt = attempt
            all[id] = entry
            return (previous, attempt)
        }
        if let previous { Self.finish(previous, status: task.response?.statusCode, error: nil) }
        var request = request
        tracer.inject(attempt.context, into: &request, using: HeaderInjector())
        return request
    }

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        guard let entry = spans.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        let status = task.response?.statusCode
        if let attempt = entry.attempt { Self.finish(attempt, status: status, error: error) }
        Self.finish(entry.request, status: status, error: error)
    }

    private static func describe(_ span: any Span, request: URLRequest) {
        span.attributes["http.request.method"] = request.httpMethod ?? "GET"
        span.attributes["url.full"] = RequestLogger.loggable(request.url)
        if let host = request.url?.host { span.attributes["server.address"] = host }
        span.attributes["server.port"] = request.url?.port ?? (request.url?.scheme == "https" ? 443 : 80)
    }

    private static func finish(_ span: any Span, status: Int?, error: (any Error)?) {
        if let status {
            span.attributes["http.response.status_code"] = status
            if status >= 400 {
                span.attributes["error.type"] = String(status)
                span.setStatus(SpanStatus(code: .error))
            }
        }
        if let error {
            span.attributes["error.type"] = (error as? CourierError).map { RequestMetrics.kind($0) } ?? "other"
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}

/// Writes trace context into a request's header fields.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}
