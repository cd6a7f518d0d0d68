import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``TaskMetrics`` and ``TransactionMetrics`` from real exchanges: Courier's own HTTP/1.1 connections,
/// AsyncHTTPClient's over TLS against nginx (HTTP/1.1 and HTTP/2), and URLSession.
@Suite(.serialized) struct TaskMetricsTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Metrics") } catch { fatalError("certificates: \(error)") }
    }()

    /// The dates that are there, in the order an exchange passes them; `connect` includes the connect dates.
    static func expectOrdered(
        _ metrics: TransactionMetrics, connect: Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let named: [(String, Date?)] = [
            ("fetchStart", metrics.fetchStartDate),
            ("connectStart", connect ? metrics.connectStartDate : nil),
            ("connectEnd", connect ? metrics.connectEndDate : nil),
            ("requestStart", metrics.requestStartDate), ("requestEnd", metrics.requestEndDate),
            ("responseStart", metrics.responseStartDate), ("responseEnd", metrics.responseEndDate),
        ]
        let present = named.compactMap { name, date in date.map { (name, $0) } }
        for (earlier, later) in zip(present, present.dropFirst()) {
            #expect(earlier.1 <= later.1, "\(earlier.0) after \(later.0)", sourceLocation: sourceLocation)
        }
    }

    @Test("Plain http on Courier's own connections: the first exchange opens a connection, the second reuses it")
    func ownConnectionsNewThenReused() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "twelve bytes")])
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = true  // whatever the suite's default
        let transport = NIOTransport(configuration: configuration)
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        defer { manager.invalidate(cancelingTasks: true) }
        let first = try await manager.send(URLRequest(url: server.url("one")), serializer: HTTPResponseSerializer())
        let second = try await manager.send(URLRequest(url: server.url("two")), serializer: HTTPResponseSerializer())
        await transport.shutdown()
        try await server.stop()

        let firstMetrics = try #require(first.taskMetrics)
        let secondMetrics = try #require(second.taskMetrics)
        #expect(firstMetrics.transactionMetrics.count == 1)
        #expect(secondMetrics.transactionMetrics.count == 1)
        let new = try #require(firstMetrics.transactionMetrics.first)
        let reused = try #require(secondMetrics.transactionMetrics.first)
        #expect(!new.isReusedConnection)
        #expect(new.connectStartDate != nil && new.connectEndDate != nil)
        #expect(reused.isReusedConnection)
        #expect(reused.connectStartDate == nil && reused.connectEndDate == nil)
        for metrics in [new, reused] {
            #expect(metrics.networkProtocolName == "http/1.1")
            #expect(metrics.negotiatedTLSProtocolVersion == nil)
            #expect(metrics.statusCode == 200)
            #expect(metrics.method == "GET")
            #expect(metrics.countOfResponseBodyBytesReceived == 12)
            #expect(metrics.resourceFetchType == .networkLoad)
            #expect(metrics.requestStartDate != nil && metrics.requestEndDate != nil)
            #expect(metrics.responseStartDate != nil && metrics.responseEndDate != nil)
            Self.expectOrdered(metrics, connect: true)
        }
        #expect(new.url == server.url("one"))
        // The task's interval holds its exchange.
        if let fetch = new.fetchStartDate, let end = new.responseEndDate {
            #expect(firstMetrics.taskInterval.start <= fetch && end <= firstMetrics.taskInterval.end)
        }
    }

    @Test("A redirect is a transaction of its own, and the notification and monitors carry the same metrics")
    func redirectAndNotification() async throws {
        let server = try await ScriptedServer.start { index, received in
            received.path == "/start"
                ? .init(status: 302, headers: [("Location", "/end")], body: "moved") : .init(status: 200, body: "here")
        }
        let monitor = CompletedMetrics()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        let transport = NIOTransport()
        let manager = HTTPSessionManager(configuration: configuration, transport: transport)
        let posted = Locked<TaskMetrics?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: .taskDidComplete, object: nil, queue: nil) {
            note in
            if let metrics = note.userInfo?[SessionNotificationKey.sessionTaskMetrics] as? TaskMetrics,
                metrics.transactionMetrics.first?.url.path == "/start"
            {
                posted.withLock { $0 = metrics }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let response = try await manager.send(
            URLRequest(url: server.url("start")), serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()

        let metrics = try #require(response.taskMetrics)
        #expect(metrics.redirectCount == 1)
        #expect(metrics.transactionMetrics.map(\.statusCode) == [302, 200])
        #expect(metrics.transactionMetrics.map(\.url.path) == ["/start", "/end"])
        #expect(metrics.transactionMetrics.map(\.countOfResponseBodyBytesReceived) == [5, 4])
        #expect(metrics.transactionMetrics.last?.isReusedConnection == true)
        try await waitUntil { posted.withLock { $0 } != nil && monitor.metrics.withLock { $0 } != nil }
        #expect(posted.withLock { $0 } == metrics)
        #expect(monitor.metrics.withLock { $0 } == metrics)
    }

    @Test("A server's own x-courier-connection field never reaches the response nor the metrics")
    func reporterFieldCannotBeForged() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("X-Courier-Connection", "r 0 TLSv1.0 h2")], body: "ok")
        ])
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = false  // AsyncHTTPClient's connections carry the reporter
        let transport = NIOTransport(configuration: configuration)
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        let response = try await manager.send(
            URLRequest(url: server.url("forged")), serializer: HTTPResponseSerializer())
        let streamed = try await manager.stream(URLRequest(url: server.url("forged")))
        for try await _ in streamed.chunks {}
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()

        #expect(response.response.value(forHTTPHeaderField: "X-Courier-Connection") == nil)
        #expect(streamed.response.value(forHTTPHeaderField: "X-Courier-Connection") == nil)
        let metrics = try #require(response.taskMetrics?.transactionMetrics.first)
        #expect(!metrics.isReusedConnection)
        #expect(metrics.negotiatedTLSProtocolVersion == nil)
        #expect(metrics.networkProtocolName == "http/1.1")
        #expect(metrics.connectEndDate != nil)
        Self.expectOrdered(metrics, connect: true)
    }

    @Test("Over HTTPS: a new connection with TLS 1.3 and the protocol, then a reused one", arguments: [false, true])
    func httpsNewThenReused(http2: Bool) async throws {
        let server = try await NginxTLS.start(
            chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        var transportConfiguration = NIOTransport.Configuration()
        transportConfiguration.allowsHTTP2 = http2
        let transport = NIOTransport(configuration: transportConfiguration)
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        var policy = SecurityPolicy.default
        policy.additionalTrustedCertificates = [Self.chain.root.der]
        try manager.setSecurityPolicy(policy)
        let first = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        let second = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        let streamed = try await manager.stream(URLRequest(url: server.baseURL))
        var streamedBytes = 0
        for try await chunk in streamed.chunks { streamedBytes += chunk.count }
        let streamedMetrics = try await waitForMetrics(of: streamed.task)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()

        let new = try #require(first.taskMetrics?.transactionMetrics.first)
        let reused = try #require(second.taskMetrics?.transactionMetrics.first)
        let protocolName = http2 ? "h2" : "http/1.1"
        #expect(!new.isReusedConnection)
        #expect(new.negotiatedTLSProtocolVersion == "TLSv1.3")
        #expect(new.networkProtocolName == protocolName)
        #expect(new.remoteAddress == "127.0.0.1")
        #expect(new.connectEndDate != nil && new.secureConnectionEndDate != nil)
        #expect(new.requestEndDate != nil)
        #expect(reused.isReusedConnection)
        #expect(reused.connectEndDate == nil && reused.secureConnectionEndDate == nil)
        #expect(reused.negotiatedTLSProtocolVersion == "TLSv1.3")
        #expect(reused.networkProtocolName == protocolName)
        Self.expectOrdered(new, connect: true)
        Self.expectOrdered(reused, connect: true)
        #expect(new.countOfResponseBodyBytesReceived == first.data.count)
        // The streamed exchange: the session saw its body end. It runs on AsyncHTTPClient's pool; the collected ones
        // ran there too only with the own connections off, so only then is its connection a reused one.
        let streamedTransaction = try #require(streamedMetrics.transactionMetrics.first)
        #expect(streamedTransaction.isReusedConnection == !transportConfiguration.usesOwnConnections)
        #expect(streamedTransaction.negotiatedTLSProtocolVersion == "TLSv1.3")
        #expect(streamedTransaction.remoteAddress == "127.0.0.1")  // through AsyncHTTPClient's pool
        #expect(streamedTransaction.networkProtocolName == protocolName)
        #expect(streamedTransaction.responseEndDate != nil)
        #expect(streamedTransaction.countOfResponseBodyBytesReceived == Int64(streamedBytes))
        Self.expectOrdered(streamedTransaction, connect: false)
    }

    @Test("URLSessionTransport: the dates it sees, no connection facts")
    func urlSessionTransport() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "plain")])
        let transport = URLSessionTransport()
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: transport)
        let response = try await manager.send(URLRequest(url: server.url("u")), serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
        try await server.stop()

        let metrics = try #require(response.taskMetrics?.transactionMetrics.first)
        #expect(metrics.fetchStartDate != nil && metrics.requestStartDate != nil)
        #expect(metrics.responseStartDate != nil && metrics.responseEndDate != nil)
        #expect(metrics.networkProtocolName == nil && metrics.negotiatedTLSProtocolVersion == nil)
        #expect(metrics.countOfResponseBodyBytesReceived == 5)
        Self.expectOrdered(metrics, connect: false)
    }

    /// The task's metrics once it has completed (a streamed task completes after its body's end was read).
    private func waitForMetrics(of task: SessionTask) async throws -> TaskMetrics {
        try await waitUntil { task.metrics != nil }
        return try #require(task.metrics)
    }
}

/// Keeps the metrics of the last task that completed.
private final class CompletedMetrics: EventMonitor {
    let metrics = Locked<TaskMetrics?>(nil)

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        self.metrics.withLock { $0 = metrics }
    }
}
