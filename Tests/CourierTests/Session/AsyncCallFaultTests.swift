import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `async` calls against a ``FaultServer`` that misbehaves. On `NIOTransport` these run inline in the caller's task
/// with the body collected by the transport (no runner task), so timeouts and `cancel()` must reach the exchange
/// through the task's ``ExchangeCancellation``; each fault must throw one ``CourierError`` with the right code,
/// leave no task behind, and leave the caller's own task uncancelled.
@Suite("Async call faults", .serialized, .timeLimit(.minutes(1)))
struct AsyncCallFaultTests {
    @Test("Connection closed mid-body → -1005", arguments: FaultTransportKind.all)
    func closedMidBody(_ kind: FaultTransportKind) async throws {
        try await withClient(.closeMidBody, kind) { client, _ in
            let error = await thrownCourierError {
                try await client.send("GET", "", serializer: HTTPResponseSerializer())
            }
            #expect(error?.errorCode == -1005, "\(String(describing: error))")
            #expect(client.tasks.isEmpty)
        }
    }

    @Test(
        "A small body that trickles in after its head arrives whole (the caller, woken by the head, waits again)",
        arguments: FaultTransportKind.all)
    func smallBodyAfterItsHead(_ kind: FaultTransportKind) async throws {
        try await withClient(.slowBody(bytes: 6, every: 0.05), kind) { client, _ in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await client.send("GET", "", serializer: HTTPResponseSerializer())
            #expect(clock.now - start >= .milliseconds(250), "the call returned before the body was in")
            #expect(response.data == Data("abcdef".utf8))
            #expect(response.statusCode == 200)
            #expect(client.tasks.isEmpty)
        }
    }

    @Test("Garbage status line → -1011", arguments: FaultTransportKind.all)
    func garbageStatusLine(_ kind: FaultTransportKind) async throws {
        try await withClient(.garbageStatusLine, kind) { client, _ in
            let error = await thrownCourierError {
                try await client.send("GET", "", serializer: HTTPResponseSerializer())
            }
            #expect(error?.errorCode == -1011, "\(String(describing: error))")
            #expect(client.tasks.isEmpty)
        }
    }

    @Test(
        "A head slower than the request timeout → -1001; the caller's task is not cancelled",
        arguments: FaultTransportKind.all)
    func requestTimeout(_ kind: FaultTransportKind) async throws {
        try await withClient(.slow(headAfter: nil), kind) { client, server in
            let clock = ContinuousClock()
            let start = clock.now
            let error = await thrownCourierError {
                try await client.send(Self.request(server, timeout: 0.5), serializer: HTTPResponseSerializer())
            }
            let elapsed = clock.now - start
            #expect(error?.errorCode == -1001, "\(String(describing: error))")
            #expect(elapsed >= .milliseconds(450))
            #expect(elapsed < .seconds(3))
            #expect(!Task.isCancelled, "the timeout must not cancel the caller's own task")
            #expect(client.tasks.isEmpty)
            try await waitUntil { server.openConnectionCount == 0 }
        }
    }

    @Test("timeoutIntervalForResource passes while the body trickles in → -1001", arguments: FaultTransportKind.all)
    func resourceTimeout(_ kind: FaultTransportKind) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = 1
        try await withClient(.slowBody(bytes: 1000, every: 0.02), kind, configuration: configuration) { client, _ in
            let clock = ContinuousClock()
            let start = clock.now
            let error = await thrownCourierError {
                try await client.send("GET", "", serializer: HTTPResponseSerializer())
            }
            #expect(error?.errorCode == -1001, "\(String(describing: error))")
            #expect(clock.now - start < .milliseconds(3500))
            #expect(client.tasks.isEmpty)
        }
    }

    @Test(
        "cancel() on the session's task during a slow body → -999 and the connection is closed",
        arguments: FaultTransportKind.all)
    func cancelFromTheTaskList(_ kind: FaultTransportKind) async throws {
        try await withClient(.slowBody(bytes: 1000, every: 0.02), kind) { client, server in
            async let outcome = thrownCourierError {
                try await client.send("GET", "", serializer: HTTPResponseSerializer())
            }
            try await waitUntil { server.requestCount == 1 && client.tasks.count == 1 }
            try await Task.sleep(for: .milliseconds(100))
            let clock = ContinuousClock()
            let cancelled = clock.now
            client.tasks.first?.cancel()
            let error = await outcome
            #expect(clock.now - cancelled < .seconds(2))
            #expect(error?.errorCode == -999, "\(String(describing: error))")
            #expect(client.tasks.isEmpty)
            try await waitUntil { server.openConnectionCount == 0 }
        }
    }

    @Test("Cancelling the calling Swift task while waiting for the head → -999", arguments: FaultTransportKind.all)
    func cancelTheCaller(_ kind: FaultTransportKind) async throws {
        try await withClient(.slow(headAfter: nil), kind) { client, server in
            let call = Task {
                await thrownCourierError { try await client.send("GET", "", serializer: HTTPResponseSerializer()) }
            }
            try await waitUntil { server.requestCount == 1 }
            call.cancel()
            let error = await call.value
            #expect(error?.errorCode == -999, "\(String(describing: error))")
            #expect(client.tasks.isEmpty)
            try await waitUntil { server.openConnectionCount == 0 }
        }
    }

    @Test("The response's head is read lazily and whole", arguments: FaultTransportKind.all)
    func lazyResponseHead(_ kind: FaultTransportKind) async throws {
        let body = Data(#"{"ok":true}"#.utf8)
        let head =
            "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Trace: a\r\nX-Trace: b\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        try await withClient(.respond(Data(head.utf8) + body, close: false), kind) { client, _ in
            let response = try await client.get("", as: [String: Bool].self)
            #expect(response.value == ["ok": true])
            #expect(response.statusCode == 201)
            #expect(response.response.statusCode == 201)
            #expect(response.response.value(forHTTPHeaderField: "content-type") == "application/json")
            #expect(response.response.value(forHTTPHeaderField: "X-Trace") == "a, b")
            #expect(response.response.expectedContentLength == Int64(body.count))
            #expect(response.response === response.response, "made once")
        }
    }

    @Test("200 concurrent async calls each complete exactly once", arguments: FaultTransportKind.all)
    func concurrentCalls(_ kind: FaultTransportKind) async throws {
        try await withClient(.countingConnections, kind) { client, server in
            let completions = Locked([Int: Int]())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await client.send("GET", "", serializer: HTTPResponseSerializer())
                        #expect(response.statusCode == 200)
                        #expect(!response.data.isEmpty)
                        completions.withLock { $0[index, default: 0] += 1 }
                    }
                }
                try await group.waitForAll()
            }
            #expect(completions.withLock { $0.count } == 200)
            #expect(completions.withLock { $0.values.allSatisfy { $0 == 1 } })
            #expect(server.requestCount == 200)
            #expect(client.tasks.isEmpty)
        }
    }

    // MARK: Support

    private static func request(_ server: FaultServer, timeout: TimeInterval) -> URLRequest {
        var request = URLRequest(url: server.baseURL)
        request.timeoutInterval = timeout
        return request
    }
}

/// Runs `body` with a client whose base URL is a fresh server with `behaviour`, then tears both down.
private func withClient(
    _ behaviour: FaultServer.Behaviour, _ kind: FaultTransportKind,
    configuration: SessionConfiguration = .ephemeral,
    _ body: (HTTPSessionManager, FaultServer) async throws -> Void
) async throws {
    try await URLSessionQueueLock.withShared(if: !kind.isNIO) {
        let server = try await FaultServer.start(behaviour)
        try await withSession(server, kind, baseURL: server.baseURL, configuration: configuration) { client in
            try await body(client, server)
        }
    }
}
