import Foundation
import InMemoryTracing
import Testing
import Tracing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionConfiguration/tracer`` with swift-distributed-tracing's in-memory tracer.
@Suite(.timeLimit(.minutes(1)))
struct TracingTests {
    @Test("A span per task under the caller's, one per request sent, the context in each request's headers")
    func spans() async throws {
        let server = try await ScriptedServer.start([.init(status: 503), .init(status: 200, body: "ok")])
        let tracer = InMemoryTracer()
        var configuration = SessionConfiguration.ephemeral
        configuration.tracer = tracer
        configuration.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
        let client = HTTPSessionManager(configuration: configuration)
        let url = URL(string: server.url("items").absoluteString + "?token=abc")!
        let caller = tracer.startSpan("caller")
        _ = try await ServiceContext.withValue(caller.context) {
            try await client.send(URLRequest(url: url), serializer: StringResponseSerializer())
        }
        caller.end()
        try await waitUntil(timeout: .seconds(5)) { tracer.finishedSpans.count == 4 }
        let spans = tracer.finishedSpans
        let callerSpan = try #require(spans.first { $0.operationName == "caller" })
        let requestSpan = try #require(
            spans.first { $0.operationName == "GET" && $0.parentSpanID == callerSpan.spanID })
        let attempts = spans.filter { $0.parentSpanID == requestSpan.spanID }
        #expect(attempts.count == 2)
        #expect(requestSpan.kind == .client)
        #expect(requestSpan.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(requestSpan.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(requestSpan.attributes["url.full"]?.toSpanAttribute() == "\(server.url("items").absoluteString)?token=")
        #expect(requestSpan.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        let first = try #require(attempts.first { $0.attributes["http.request.resend_count"] == nil })
        let second = try #require(attempts.first { $0.attributes["http.request.resend_count"] != nil })
        #expect(first.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(first.status?.code == .error)
        #expect(second.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(second.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(server.received.map { $0.headers[InMemoryTracer.spanIDKey] } == [first.spanID, second.spanID])
        #expect(server.received.allSatisfy { $0.headers[InMemoryTracer.traceIDKey] == callerSpan.traceID })
        try await server.stop()
    }

    @Test("Without a tracer, or with the no-op one, nothing is injected")
    func noTracer() async throws {
        let server = try await ScriptedServer.start([.init(status: 200)])
        for tracer in [nil, NoOpTracer() as (any Tracer)?] {
            var configuration = SessionConfiguration.ephemeral
            configuration.tracer = tracer
            _ = try await HTTPSessionManager(configuration: configuration).send(
                URLRequest(url: server.url("x")), serializer: HTTPResponseSerializer())
        }
        #expect(server.received.count == 2)
        #expect(
            server.received.allSatisfy { $0.headers.keys.allSatisfy { !$0.contains("trace") && !$0.contains("span") } })
        try await server.stop()
    }
}
