import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``FaultInjectingTransport`` around each real transport against httpbin: the faults reach the session as a real
/// network's would, and an app's retry logic recovers from them.
@Suite(.timeLimit(.minutes(1)))
struct FaultInjectingTransportTests {
    private static func manager(_ transport: any Transport, configure: (inout SessionConfiguration) -> Void = { _ in })
        async throws -> HTTPSessionManager
    {
        var configuration = SessionConfiguration.ephemeral
        configure(&configuration)
        return HTTPSessionManager(
            baseURL: try await HTTPBin.shared.url(), configuration: configuration, transport: transport)
    }

    private static var quickRetries: RetryPolicy {
        var policy = RetryPolicy()
        policy.exponentialBackoffScale = 0.01
        return policy
    }

    @Test(
        "The first two attempts fail before anything is sent; the retry policy's third succeeds",
        arguments: FaultTransportKind.all)
    func failFirst(_ kind: FaultTransportKind) async throws {
        let faulty = FaultInjectingTransport(wrapping: kind.make(), faults: [.failFirst(2, with: .connectionLost)])
        let manager = try await Self.manager(faulty) { $0.interceptor = Self.quickRetries }
        let response = try await manager.send("GET", "get", serializer: HTTPResponseSerializer())
        #expect(response.statusCode == 200)
        #expect(faulty.requestCount == 3)
        manager.invalidate(cancelingTasks: true)
        await faulty.shutdown()
    }

    @Test(
        "A body cut after 10,000 bytes fails with -1005 once; the retry reads it whole",
        arguments: FaultTransportKind.all)
    func dropConnection(_ kind: FaultTransportKind) async throws {
        let faulty = FaultInjectingTransport(
            wrapping: kind.make(), faults: [.dropConnection(afterBytes: 10_000, matching: .get("/bytes/*"))])
        let manager = try await Self.manager(faulty)
        let serializer = HTTPResponseSerializer()
        let error = await thrownCourierError {
            _ = try await manager.send("GET", "bytes/50000?seed=3", serializer: serializer)
        }
        #expect(error?.errorCode == -1005)
        let whole = try await manager.send("GET", "bytes/50000?seed=3", serializer: serializer)
        #expect(whole.value?.count == 50_000)
        #expect(faulty.requestCount == 2)
        manager.invalidate(cancelingTasks: true)
        await faulty.shutdown()
    }

    @Test("A stalled body runs into the session's timeout (-1001)", arguments: FaultTransportKind.all)
    func stall(_ kind: FaultTransportKind) async throws {
        let faulty = FaultInjectingTransport(
            wrapping: kind.make(), faults: [.stall(afterBytes: 1, for: .seconds(30))])
        let manager = try await Self.manager(faulty) { $0.timeoutIntervalForRequest = 0.5 }
        let started = ContinuousClock.now
        let error = await thrownCourierError {
            _ = try await manager.send("GET", "bytes/20000?seed=1", serializer: HTTPResponseSerializer())
        }
        #expect(error?.errorCode == -1001)
        #expect(ContinuousClock.now - started < .seconds(20))
        manager.invalidate(cancelingTasks: true)
        await faulty.shutdown()
    }

    @Test("Slow chunks make a body arrive late, whole", arguments: FaultTransportKind.all)
    func slowChunks(_ kind: FaultTransportKind) async throws {
        let faulty = FaultInjectingTransport(wrapping: kind.make(), faults: [.slowChunks(every: .milliseconds(150))])
        let manager = try await Self.manager(faulty)
        let started = ContinuousClock.now
        let response = try await manager.send("GET", "bytes/1000?seed=2", serializer: HTTPResponseSerializer())
        #expect(response.value?.count == 1000)
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        manager.invalidate(cancelingTasks: true)
        await faulty.shutdown()
    }
}
