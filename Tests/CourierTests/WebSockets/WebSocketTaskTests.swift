import CourierFixtures
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``WebSocketTask`` on ``NIOTransport`` against ``WebSocketServer``: echo, fragments, pings, closes, limits, and
/// pinning over `wss` before the upgrade; cookies, interceptors and the policy on a ``URLSessionTransport`` session
/// too (its connections are Courier's own, not URLSession's).
@Suite(.timeLimit(.minutes(1)))
struct WebSocketTaskTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "Socket") } catch { fatalError("certificates: \(error)") }
    }()

    /// The transports a session's WebSockets are checked on.
    enum TransportKind: String, CaseIterable, CustomTestStringConvertible {
        case nio, urlSession
        var testDescription: String { rawValue }
        func make() -> any Transport { self == .nio ? NIOTransport() : URLSessionTransport() }
    }

    func withSocket(
        on transport: TransportKind = .nio, tls: Bool = false, refusing: Int = 0,
        configuration: SessionConfiguration = .ephemeral,
        configure: (SessionManager) throws -> Void = { _ in }, protocols: [String] = [],
        maximumMessageSize: Int = 1 << 20,
        _ body: (WebSocketTask, WebSocketServer, SessionManager) async throws -> Void
    ) async throws {
        let server = try await WebSocketServer.start(
            tls: tls ? (Self.chain.fullChainPEM, Self.chain.leaf.privateKeyPEM) : nil, refusing: refusing)
        let manager = SessionManager(configuration: configuration, transport: transport.make())
        var failure: (any Error)?
        do {
            try configure(manager)
            let socket = manager.webSocketTask(
                with: URLRequest(url: server.url), protocols: protocols, maximumMessageSize: maximumMessageSize)
            try await body(socket, server, manager)
            await socket.cancel(with: .normalClosure)
        } catch {
            failure = error
        }
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try? await server.stop()
        if let failure { throw failure }
    }

    @Test(
        "Text and binary messages echo; the subprotocol is negotiated; the 101's cookie is stored",
        arguments: TransportKind.allCases)
    func echo(on transport: TransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        let jar = CookieJar()
        configuration.cookieStore = jar
        try await withSocket(on: transport, configuration: configuration, protocols: ["chat", "superchat"]) {
            socket, _, manager in
            try await socket.send(.string("hello ✓"))
            #expect(try await socket.receive() == .string("hello ✓"))
            try await socket.send(.data(Data([0, 1, 2, 255])))
            #expect(try await socket.receive() == .data(Data([0, 1, 2, 255])))
            #expect(socket.negotiatedProtocol == "chat")
            let cookies = jar.cookies(for: URL(string: "http://127.0.0.1/")!)
            #expect(cookies.contains { $0.name == "socket" && $0.value == "upgraded" })
            _ = manager
        }
    }

    @Test("A 1 MiB message arrives whole from 16 fragments; a larger one closes with 1009")
    func fragmentsAndLimit() async throws {
        try await withSocket { socket, _, _ in
            try await socket.send(.string("big \(1 << 20)"))
            let message = try await socket.receive()
            guard case .data(let data) = message else {
                Issue.record("not binary: \(message)")
                return
            }
            #expect(data.count == 1 << 20)
            #expect(data == TestBytes.periodic(count: 1 << 20) { UInt8(truncatingIfNeeded: $0) })
            try await socket.send(.string("big \((1 << 20) + 1)"))
            await #expect(throws: WebSocketClosedError.self) { try await socket.receive() }
            #expect(socket.closeCode == .messageTooBig)
        }
    }

    @Test("sendPing returns when the pong arrives")
    func ping() async throws {
        try await withSocket { socket, _, _ in
            for _ in 0..<3 { try await socket.sendPing() }
            try await socket.send(.string("after pings"))
            #expect(try await socket.receive() == .string("after pings"))
        }
    }

    @Test("The server's close code and reason are delivered; messages ends only on 1000")
    func serverClose() async throws {
        try await withSocket { socket, server, _ in
            try await socket.send(.string("close 4001 going home"))
            do {
                _ = try await socket.receive()
                Issue.record("received after the close")
            } catch let closed as WebSocketClosedError {
                #expect(closed.code == WebSocketCloseCode(rawValue: 4001))
                #expect(closed.reason == "going home")
            }
            #expect(socket.closeCode?.rawValue == 4001)
            #expect(socket.closeReason == "going home")
            await #expect(throws: WebSocketClosedError.self) { try await socket.send(.string("late")) }
            try await waitUntil { server.clientCloses.withLock { $0.count } == 1 }
            #expect(server.clientCloses.withLock { $0.first?.code } == 4001)  // the close echoed back
        }
        try await withSocket { socket, _, _ in
            try await socket.send(.string("one"))
            try await socket.send(.string("close 1000 done"))
            var received: [WebSocketMessage] = []
            for try await message in socket.messages { received.append(message) }
            #expect(received == [.string("one")])
        }
    }

    @Test("cancel(with:reason:) sends the close frame and waits for the server's")
    func clientClose() async throws {
        try await withSocket { socket, server, _ in
            try await socket.send(.string("x"))
            _ = try await socket.receive()
            await socket.cancel(with: .goingAway, reason: "bye")
            #expect(socket.closeCode == .goingAway)
            let closes = server.clientCloses.withLock { $0 }
            #expect(closes.count == 1 && closes.first?.code == 1001 && closes.first?.reason == "bye")
        }
    }

    @Test(
        "The upgrade is a session task: adapted, retried, and seen by monitors until the connection closes",
        arguments: TransportKind.allCases)
    func sessionTask(on transport: TransportKind) async throws {
        let monitor = EventMonitorTests.RecordingMonitor()
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        configuration.interceptor = Interceptor(
            adapters: [TokenAdapter()], retriers: [RetryPolicy(exponentialBackoffScale: 0.01)])
        try await withSocket(on: transport, refusing: 1, configuration: configuration) { socket, server, manager in
            #expect(manager.tasks.contains(socket))
            try await socket.send(.string("adapted"))
            #expect(try await socket.receive() == .string("adapted"))
            #expect(socket.state == .running)
            #expect(socket.response?.statusCode == 101)
            #expect(socket.retryCount == 1)
            #expect(server.upgrades.withLock { $0 } == 2)  // the first was refused
            // Each attempt was adapted afresh from the original request: one token, not two.
            #expect(
                server.upgradeHeaders.withLock { $0.map { $0[canonicalForm: "x-token"] } } == [["s3cret"], ["s3cret"]])
            await socket.cancel(with: .normalClosure, reason: "done")
            try await waitUntil { socket.state == .completed }
            #expect(socket.error == nil)
            try await waitUntil { monitor.count("completed", socket) == 1 }
            for event in ["created", "resumed", "response"] { #expect(monitor.count(event, socket) == 1, "\(event)") }
            let metrics = try #require(monitor.metrics(socket))
            #expect(metrics.transactionMetrics.count == 1)
            let upgrade = try #require(metrics.transactionMetrics.first)
            #expect(upgrade.statusCode == 101)
            #expect(upgrade.networkProtocolName == "http/1.1")
            #expect(upgrade.isReusedConnection == false)
            let dates = [
                upgrade.connectStartDate, upgrade.connectEndDate, upgrade.requestStartDate,
                upgrade.responseStartDate,
            ].compactMap { $0 }
            #expect(dates.count == 4 && dates == dates.sorted())
        }
    }

    @Test("cancel() on the session task closes the connection (1001) and completes it with -999")
    func cancelTask() async throws {
        try await withSocket { socket, server, manager in
            try await socket.send(.string("x"))
            _ = try await socket.receive()
            socket.cancel()
            try await waitUntil { socket.state == .completed }
            #expect((socket.error as? CourierError)?.errorCode == -999)
            try await waitUntil { server.clientCloses.withLock { $0.count } == 1 }
            #expect(server.clientCloses.withLock { $0.first?.code } == 1001)
            #expect(!manager.tasks.contains(socket))
        }
        // Before it connected: it never connects.
        try await withSocket { socket, server, _ in
            socket.cancel()
            let error = await thrownCourierError { try await socket.send(.string("never")) }
            #expect(error?.errorCode == -999)
            #expect(server.upgrades.withLock { $0 } == 0)
        }
    }

    @Test("The server's close other than 1000 completes the task with the close error")
    func closedTaskError() async throws {
        try await withSocket { socket, _, _ in
            try await socket.send(.string("close 4002 later"))
            await #expect(throws: WebSocketClosedError.self) { try await socket.receive() }
            try await waitUntil { socket.state == .completed }
            #expect((socket.error as? WebSocketClosedError)?.code.rawValue == 4002)
        }
    }

    @Test("A text message that is not UTF-8 closes with 1007")
    func invalidUTF8() async throws {
        try await withSocket { socket, server, _ in
            try await socket.send(.string("badutf8"))
            await #expect(throws: WebSocketClosedError.self) { try await socket.receive() }
            #expect(socket.closeCode == .invalidFramePayloadData)
            try await waitUntil { server.clientCloses.withLock { $0.count } == 1 }
            #expect(server.clientCloses.withLock { $0.first?.code } == 1007)
        }
    }

    @Test("1,000 messages each way arrive in order")
    func manyInOrder() async throws {
        try await withSocket { socket, _, _ in
            let sender = Task {
                for index in 0..<1000 { try await socket.send(.string("message \(index)")) }
            }
            for index in 0..<1000 {
                #expect(try await socket.receive() == .string("message \(index)"))
            }
            try await sender.value
        }
    }

    @Test(
        "wss: the session's policy passes the right root; a wrong pin fails with -1202 before the upgrade",
        arguments: TransportKind.allCases)
    func pinning(on transport: TransportKind) async throws {
        try await withSocket(
            on: transport, tls: true,
            configure: { manager in
                var policy = SecurityPolicy.default
                policy.additionalTrustedCertificates = [Self.chain.root.der]
                try manager.setSecurityPolicy(policy)
            }
        ) { socket, server, _ in
            try await socket.send(.string("secure"))
            #expect(try await socket.receive() == .string("secure"))
            #expect(server.upgrades.withLock { $0 } == 1)
        }
        let other = try CertificateChain.make(name: "Unrelated")
        try await withSocket(
            on: transport, tls: true,
            configure: { manager in
                let pinned = try SecurityPolicy(pinnedPublicKeyHashesBase64: [other.leaf.publicKeyHashBase64])
                var policy = pinned
                policy.additionalTrustedCertificates = [Self.chain.root.der]
                try manager.setSecurityPolicy(policy)
            }
        ) { socket, server, _ in
            let error = await thrownCourierError { try await socket.send(.string("never")) }
            #expect(error?.errorCode == -1202, "\(String(describing: error))")
            #expect(server.upgrades.withLock { $0 } == 0)
        }
    }

    @Test("A server that refuses the upgrade fails with its status, on either transport")
    func refusals() async throws {
        let server = try await ScriptedServer.start([.init(status: 403, body: "no")])
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        let socket = manager.webSocketTask(with: URLRequest(url: server.url("socket")))
        let error = await thrownCourierError { try await socket.receive() }
        #expect(error?.errorCode == -1011)
        if case .unacceptableStatusCode(let status, _, _) = error { #expect(status == 403) }
        manager.invalidate(cancelingTasks: true)
        try await server.stop()

        // URLSessionTransport opened none before (-1002); now it opens and reports as NIOTransport does.
        let refusing = try await ScriptedServer.start([.init(status: 403, body: "no")])
        let urlSession = SessionManager(configuration: .ephemeral, transport: URLSessionTransport())
        let refused = await thrownCourierError {
            try await urlSession.webSocketTask(with: URLRequest(url: refusing.url("socket"))).receive()
        }
        #expect(refused?.errorCode == -1011)
        urlSession.invalidate(cancelingTasks: true)
        try await refusing.stop()
    }
}

/// Adds a token to every request, as an authentication adapter would.
private struct TokenAdapter: RequestAdapter {
    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        var request = request
        request.addValue("s3cret", forHTTPHeaderField: "X-Token")
        return request
    }
}
