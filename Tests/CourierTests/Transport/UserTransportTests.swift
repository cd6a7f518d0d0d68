import Foundation
import Testing

@testable import Courier

/// A transport written outside Courier gets the session's collected path through ``Transport``'s default
/// `collect`, or its own when it implements one; timeouts and cancellation reach it either way.
@Suite struct UserTransportTests {
    /// Implements only what ``Transport`` requires, forwarding to a ``NIOTransport``'s streaming `send`.
    final class SendOnlyTransport: Transport {
        let inner = NIOTransport()
        let sends = Locked(0)

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            sends.withLock { $0 += 1 }
            return try await inner.send(request)
        }

        func shutdown() async { await inner.shutdown() }
    }

    /// Implements `collect` as well, and counts which entry the session used.
    final class CollectingTransport: Transport {
        let inner = NIOTransport()
        let sends = Locked(0)
        let collects = Locked(0)

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            sends.withLock { $0 += 1 }
            return try await inner.send(request)
        }

        func collect(
            _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
        ) async throws -> TransportResponse {
            collects.withLock { $0 += 1 }
            return try await inner.collect(request, cancellation: cancellation, activity: activity)
        }

        func shutdown() async { await inner.shutdown() }
    }

    @Test("A send-only transport serves an async call through the default collect, with the body whole")
    func defaultCollect() async throws {
        let server = try await FaultServer.start(.respond(FaultServer.ok("collected"), close: false))
        let transport = SendOnlyTransport()
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: .ephemeral, transport: transport)
        let response = try await manager.send("GET", "a", serializer: HTTPResponseSerializer())
        #expect(String(decoding: response.data, as: UTF8.self) == "collected")
        #expect(transport.sends.value == 1)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("The request timeout cancels a send-only transport's exchange through the default collect")
    func defaultCollectTimesOut() async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))  // never answers
        let transport = SendOnlyTransport()
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 0.3
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration, transport: transport)
        let started = ContinuousClock.now
        let error = await #expect(throws: CourierError.self) {
            _ = try await manager.send("GET", "a", serializer: HTTPResponseSerializer())
        }
        #expect(error?.errorCode == -1001)
        // What matters is that the timeout reached the transport: the exchange it was sending is cancelled and its
        // connection closed. The time it took only shows that the 0.3 s timeout fired rather than a later limit:
        // the default collect crosses the cooperative pool three times, and at the start of the parallel suite on
        // two cores each crossing waits behind hundreds of starting tests (measured up to 5.3 s in all with 835
        // tests), so the bound is loose.
        // (Under that load the timeout can even fire before the connection is accepted.)
        try await waitUntil(timeout: .seconds(10)) { server.openConnectionCount == 0 }
        #expect(ContinuousClock.now - started < .seconds(20))
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("A transport's own collect is what the session calls for an async call")
    func ownCollect() async throws {
        let server = try await FaultServer.start(.respond(FaultServer.ok("own"), close: false))
        let transport = CollectingTransport()
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: .ephemeral, transport: transport)
        let response = try await manager.send("GET", "a", serializer: HTTPResponseSerializer())
        #expect(String(decoding: response.data, as: UTF8.self) == "own")
        #expect(transport.collects.value == 1)
        #expect(transport.sends.value == 0)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()
    }
}
