import CoreMetrics
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionConfiguration/logger`` and ``SessionConfiguration/metricsFactory`` seen through swift-log's and
/// swift-metrics' in-memory handlers.
@Suite(.timeLimit(.minutes(1)))
struct ObservabilityTests {
    static func logger(_ level: Logger.Level) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "courier-test") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    static func client(_ configure: (inout SessionConfiguration) -> Void) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configure(&configuration)
        return HTTPSessionManager(configuration: configuration)
    }

    static func request(_ server: ScriptedServer) -> URLRequest {
        var request = URLRequest(url: URL(string: server.url("items").absoluteString + "?token=abc123&page=2")!)
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        request.setValue("key-456", forHTTPHeaderField: "X-Api-Key")
        return request
    }

    @Test("One debug line per request, no query values; headers at trace with secrets redacted")
    func logsRequests() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("Set-Cookie", "session=s3cr3t")], body: "twelve bytes")
        ])
        let (logger, handler) = Self.logger(.trace)
        let client = Self.client {
            $0.logger = logger
            $0.redactedHeaders.insert("X-Api-Key")
        }
        _ = try await client.send(Self.request(server), serializer: StringResponseSerializer())
        try await waitUntil(timeout: .seconds(5)) { handler.entries.count >= 3 }
        let entries = handler.entries
        let lines = entries.map { "\($0.message)" }
        let debug = entries.filter { $0.level == .debug }.map { "\($0.message)" }
        #expect(debug.count == 1)
        #expect(
            debug.first?.hasPrefix("GET \(server.url("items").absoluteString)?token=&page= 200, 12 bytes, ") == true)
        #expect(debug.first?.hasSuffix("ms, attempt 1") == true)
        #expect(lines.contains { $0.contains("Authorization: <redacted>") && $0.contains("X-Api-Key: <redacted>") })
        #expect(lines.contains { $0.contains("Set-Cookie: <redacted>") })
        for secret in ["abc123", "secret-token", "key-456", "s3cr3t"] {
            #expect(!lines.contains { $0.contains(secret) }, "\(secret) was logged")
            #expect(!entries.contains { $0.metadata.description.contains(secret) }, "\(secret) in metadata")
        }
        try await server.stop()
    }

    @Test("At the default .info level nothing is logged")
    func silentAtInfo() async throws {
        let server = try await ScriptedServer.start([.init(status: 200)])
        let (logger, handler) = Self.logger(.info)
        let client = Self.client { $0.logger = logger }
        _ = try await client.send(Self.request(server), serializer: StringResponseSerializer())
        try await Task.sleep(for: .milliseconds(100))
        #expect(handler.entries.isEmpty)
        try await server.stop()
    }

    @Test("Retries are logged, and the final line names the attempt")
    func logsRetries() async throws {
        let server = try await ScriptedServer.start([.init(status: 503), .init(status: 200)])
        let (logger, handler) = Self.logger(.debug)
        let client = Self.client {
            $0.logger = logger
            $0.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
        }
        _ = try await client.send(Self.request(server), serializer: StringResponseSerializer())
        try await waitUntil(timeout: .seconds(5)) { handler.entries.count >= 2 }
        let lines = handler.entries.map { "\($0.message)" }
        #expect(lines.first?.contains("failed (-1011); retrying") == true, "\(lines)")
        #expect(lines.last?.contains(" 200, ") == true && lines.last?.hasSuffix("attempt 2") == true, "\(lines)")
    }

    @Test("Requests, durations, errors by kind, retries and bytes, by method, status class and host")
    func metrics() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, body: "12345"), .init(status: 503), .init(status: 404, body: "nope"),
        ])
        let metrics = TestMetrics()
        let client = Self.client {
            $0.metricsFactory = metrics
            $0.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
        }
        let url = server.url("items")
        _ = try await client.send(URLRequest(url: url), serializer: StringResponseSerializer())
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: url), serializer: StringResponseSerializer())
        }
        #expect(error?.response?.statusCode == 404)
        let host = [("method", "GET"), ("host", "127.0.0.1")]
        try await waitUntil(timeout: .seconds(5)) {
            metrics.counterTotal(label: "courier_errors_total") == 1
                && metrics.counterTotal(label: "courier_requests_total") == 2
        }
        #expect(try metrics.expectCounter("courier_requests_total", host + [("status_class", "2xx")]).totalValue == 1)
        #expect(try metrics.expectCounter("courier_requests_total", host + [("status_class", "4xx")]).totalValue == 1)
        #expect(try metrics.expectCounter("courier_retries_total", host).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "courier_errors_total", host + [("status_class", "4xx"), ("kind", "unacceptableStatusCode")]
            ).totalValue == 1)
        #expect(try metrics.expectCounter("courier_bytes_received_total", host).totalValue == 9)
        let timer = try metrics.expectTimer("courier_request_duration", host + [("status_class", "2xx")])
        #expect(timer.values.count == 1)
        #expect(timer.values.first.map { $0 > 0 } == true)
        try await server.stop()
    }
}
