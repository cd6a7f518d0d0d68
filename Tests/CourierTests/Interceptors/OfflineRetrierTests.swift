import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``OfflineRetrier`` on both transports: a request refused while the network is down goes out again once a
/// reachable status comes, and not otherwise.
@Suite(.timeLimit(.minutes(1)))
struct OfflineRetrierTests {
    /// The network's status as a test decides it: every sequence starts with the current status, then each change.
    final class Network: Sendable {
        private let state = Locked<
            (status: ReachabilityStatus, watchers: [AsyncStream<ReachabilityStatus>.Continuation])
        >(
            (.notReachable, []))

        init(_ status: ReachabilityStatus) { state.withLock { $0.status = status } }

        func statuses() -> AsyncStream<ReachabilityStatus> {
            AsyncStream { continuation in
                let current = state.withLock { state in
                    state.watchers.append(continuation)
                    return state.status
                }
                continuation.yield(current)
            }
        }

        /// Returns once something watches the statuses: the retrier, asked about a failure.
        func watched() async throws {
            while state.withLock({ $0.watchers.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        }

        func set(_ status: ReachabilityStatus) {
            let watchers = state.withLock { state in
                state.status = status
                return state.watchers
            }
            watchers.forEach { $0.yield(status) }
        }
    }

    /// Sends the first attempt to a refusing port and every retry to `server`: the network "coming back".
    struct ToServerOnRetry: RequestAdapter {
        let server: URL

        func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
            guard task.retryCount > 0 else { return request }
            var request = request
            request.url = server
            return request
        }
    }

    static func client(_ transport: String, server: URL, retrier: OfflineRetrier) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = Interceptor(adapters: [ToServerOnRetry(server: server)], retriers: [retrier])
        return HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
    }

    @Test("Refused while offline: sent again once the network is back, not before", arguments: TestTransports.names)
    func retriedWhenTheNetworkReturns(transport: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "back")])
        let refusing = try RefusingPort()
        let network = Network(.notReachable)
        let retrier = OfflineRetrier(maximumWait: .seconds(20), statuses: { network.statuses() })
        let client = Self.client(transport, server: server.url("data"), retrier: retrier)
        let start = ContinuousClock.now
        Task {
            // Back only once the refusal has reached the retrier: a refusal that came after would be one while
            // the network is up, which stands.
            try await network.watched()
            try await Task.sleep(for: .milliseconds(300))
            network.set(.reachableViaWiFi)
        }
        let response = try await client.send(
            "POST", "http://127.0.0.1:\(refusing.port)/data", serializer: StringResponseSerializer())
        #expect(response.value == "back")
        #expect(ContinuousClock.now - start >= .milliseconds(300), "retried before the network came back")
        #expect(server.received.count == 1)
        try await server.stop()
    }

    @Test("Still offline after maximumWait: the refusal stands", arguments: TestTransports.names)
    func givesUpAfterTheWait(transport: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 200)])
        let refusing = try RefusingPort()
        let network = Network(.notReachable)
        let retrier = OfflineRetrier(maximumWait: .milliseconds(300), statuses: { network.statuses() })
        let client = Self.client(transport, server: server.url("data"), retrier: retrier)
        let start = ContinuousClock.now
        let error = await thrownCourierError {
            _ = try await client.send(
                "GET", "http://127.0.0.1:\(refusing.port)/", serializer: StringResponseSerializer())
        }
        #expect(error?.errorCode == -1004)
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(server.received.isEmpty)
        try await server.stop()
    }

    @Test("Refused while the network is up, or failed with a status: not an outage, not retried")
    func notAnOutage() async throws {
        let server = try await ScriptedServer.start([.init(status: 503), .init(status: 200)])
        let refusing = try RefusingPort()
        let retrier = OfflineRetrier(maximumWait: .seconds(20), statuses: { Network(.reachableViaWiFi).statuses() })
        let client = Self.client("NIOTransport", server: server.url("data"), retrier: retrier)
        let start = ContinuousClock.now
        let refused = await thrownCourierError {
            _ = try await client.send(
                "GET", "http://127.0.0.1:\(refusing.port)/", serializer: StringResponseSerializer())
        }
        #expect(refused?.errorCode == -1004)
        #expect(ContinuousClock.now - start < .seconds(10), "waited for a network that was there")
        let offline = OfflineRetrier(maximumWait: .seconds(20), statuses: { Network(.notReachable).statuses() })
        let statusClient = Self.client("NIOTransport", server: server.url("data"), retrier: offline)
        let unavailable = await thrownCourierError {
            _ = try await statusClient.send(
                "GET", server.url("data").absoluteString, serializer: StringResponseSerializer())
        }
        #expect(unavailable?.errorCode == -1011)
        #expect(server.received.count == 1)
        try await server.stop()
    }

    @Test("A POST that timed out is not sent again; a GET is")
    func onlyIdempotentRequestsAfterAPossibleSend() async throws {
        let server = try await ScriptedServer.start([.init(status: 200)])
        let retrier = OfflineRetrier(maximumWait: .seconds(20), statuses: { Network(.notReachable).statuses() })
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: TestTransports.make("NIOTransport"))
        let task = manager.dataTask(with: URLRequest(url: server.url("data")), completionHandler: nil)
        let timedOut = CourierError.timedOut(context: CourierError.Context())
        var post = URLRequest(url: server.url("data"))
        post.httpMethod = "POST"
        let forPost = await retrier.retry(post, for: task, dueTo: timedOut, response: nil)
        guard case .doNotRetry = forPost else {
            Issue.record("a POST that may have been sent was retried: \(forPost)")
            return
        }
        let network = Network(.notReachable)
        let returning = OfflineRetrier(maximumWait: .seconds(20), statuses: { network.statuses() })
        Task {
            try await Task.sleep(for: .milliseconds(100))
            network.set(.reachableViaWWAN)
        }
        let forGet = await returning.retry(
            URLRequest(url: server.url("data")), for: task, dueTo: timedOut, response: nil)
        guard case .retry = forGet else {
            Issue.record("a GET that timed out while offline was not retried: \(forGet)")
            return
        }
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test("With a real ReachabilityManager watching 127.0.0.1 (reachable), a refusal is not retried")
    func realManagerOnLoopback() async throws {
        let refusing = try RefusingPort()
        let reachability = try ReachabilityManager(address: "127.0.0.1")
        defer { reachability.stopMonitoring() }
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = OfflineRetrier(reachability: reachability, maximumWait: .seconds(20))
        let client = HTTPSessionManager(configuration: configuration, transport: TestTransports.make("NIOTransport"))
        let start = ContinuousClock.now
        let error = await thrownCourierError {
            _ = try await client.send(
                "GET", "http://127.0.0.1:\(refusing.port)/", serializer: StringResponseSerializer())
        }
        #expect(error?.errorCode == -1004)
        #expect(reachability.isReachable)
        #expect(ContinuousClock.now - start < .seconds(10), "waited for a network that was there")
    }
}
