import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``EventSource`` against ``EventStreamServer``: reconnection with `Last-Event-ID` after `retry`, and the answers
/// that end a stream for good.
@Suite(.timeLimit(.minutes(1)))
struct EventSourceTests {
    static func manager(_ transport: String) -> SessionManager {
        SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
    }

    @Test("Dropped after id 3: reconnects after retry with Last-Event-ID: 3", arguments: TestTransports.names)
    func reconnectsWithLastEventID(transport: String) async throws {
        let server = try await EventStreamServer.start { index, _ in
            index == 0
                ? .events(
                    "retry: 300\n\nid: 1\ndata: one\n\nid: 2\ndata: two\n\nid: 3\ndata: three\n\nid: 4\ndata: cut",
                    drop: true)
                : .events("id: 4\ndata: four\n\n", drop: false)
        }
        let manager = Self.manager(transport)
        var events: [EventSource.Event] = []
        for try await event in manager.eventStream(URLRequest(url: server.url)) {
            events.append(event)
            if events.count == 4 { break }
        }
        let received = server.received
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()

        #expect(events.map(\.data) == ["one", "two", "three", "four"])
        #expect(events.map(\.id) == ["1", "2", "3", "4"])
        #expect(received.count == 2)
        #expect(received.first?.lastEventID == nil)
        #expect(received.last?.lastEventID == "3")
        #expect(received.allSatisfy { $0.accept == "text/event-stream" })
        if received.count == 2 {
            let gap = received[1].at - received[0].at
            #expect(gap >= .milliseconds(300), "reconnected after \(gap)")
        }
    }

    @Test("204, another status and another Content-Type end the stream without reconnecting")
    func fatalAnswers() async throws {
        let replies: [(EventStreamServer.Reply, Int)] = [
            (.plain(status: 204, contentType: "text/event-stream", body: ""), -1011),
            (.plain(status: 503, contentType: "text/event-stream", body: "busy"), -1011),
            (.plain(status: 200, contentType: "application/json", body: "{}"), -1016),
        ]
        for (reply, code) in replies {
            let server = try await EventStreamServer.start { _, _ in reply }
            let manager = Self.manager("NIOTransport")
            var configuration = EventSource.Configuration()
            configuration.reconnectionTime = .milliseconds(10)
            let error = await thrownCourierError {
                for try await _ in manager.eventStream(URLRequest(url: server.url), configuration: configuration) {}
            }
            #expect(error?.errorCode == code, "\(reply)")
            #expect(server.received.count == 1)
            manager.invalidate(cancelingTasks: true)
            await manager.transport.shutdown()
            try await server.stop()
        }
    }

    @Test("A refused connection is tried again up to the limit of reconnections, then fails with -1004")
    func refusedUpToTheLimit() async throws {
        let refusing = try RefusingPort()
        let url = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/events"))
        let counter = StartedTasks()
        var sessionConfiguration = SessionConfiguration.ephemeral
        sessionConfiguration.eventMonitors = [counter]
        let manager = SessionManager(configuration: sessionConfiguration, transport: NIOTransport())
        var configuration = EventSource.Configuration()
        configuration.reconnectionTime = .milliseconds(20)
        configuration.maximumReconnectAttempts = 3
        let error = await thrownCourierError {
            for try await _ in manager.eventStream(URLRequest(url: url), configuration: configuration) {}
        }
        #expect(error?.errorCode == -1004)
        // Monitors hear of a task on their own queue, maybe after the stream has ended.
        try await waitUntil { counter.count.withLock { $0 } >= 4 }
        #expect(counter.count.withLock { $0 } == 4)  // the first attempt and 3 reconnections
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
    }

    @Test("retry: 0 waits at least 100 ms, doubling while responses end at once; every reconnection counts")
    func retryZeroIsFlooredAndBacksOff() async throws {
        // Every response is one event and its end: a stream that reconnects at once, for ever, on today's code.
        let server = try await EventStreamServer.start { _, _ in
            .plain(status: 200, contentType: "text/event-stream", body: "retry: 0\ndata: x\n\n")
        }
        let manager = Self.manager("NIOTransport")
        var configuration = EventSource.Configuration()
        configuration.maximumReconnectAttempts = 4
        // When each event reached this loop: the wait before a reconnection falls between two of them. (The
        // server's clock would not do: its event loop, shared with other tests, may record a request late.)
        var arrivals: [ContinuousClock.Instant] = []
        for try await _ in manager.eventStream(URLRequest(url: server.url), configuration: configuration) {
            arrivals.append(.now)
            if arrivals.count == 50 { break }  // the limit did not stop it
        }
        let received = server.received
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()

        // The first connection and 4 reconnections, each with its event; then the stream ends without an error.
        #expect(arrivals.count == 5)
        #expect(received.count == 5)
        // Each response (head and body written at once) ends well within a second of its head, so the waits are
        // 100 ms (the floor under retry: 0), then 200, 400 and 800 ms. Lower bounds only: load makes gaps longer.
        let gaps = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }
        for (index, gap) in gaps.prefix(4).enumerated() {
            #expect(gap >= .milliseconds(100 << index), "wait \(index + 1) was \(gap)")
        }
    }

    @Test("Cancelling the iterating task ends the stream with nil and cancels its request")
    func cancellationEnds() async throws {
        let server = try await EventStreamServer.start { _, _ in .events("data: first\n\n", drop: false) }
        let manager = Self.manager("NIOTransport")
        let got = Locked<[String]>([])
        let reader = Task {
            for try await event in manager.eventStream(URLRequest(url: server.url)) {
                got.withLock { $0.append(event.data) }
            }
            return "ended"
        }
        try await waitUntil { got.withLock { $0 } == ["first"] }
        reader.cancel()
        #expect(try await reader.value == "ended")
        try await waitUntil { manager.tasks.isEmpty }
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }
}

/// Counts the tasks a session created.
private final class StartedTasks: EventMonitor {
    let count = Locked(0)
    func taskResumed(_ task: SessionTask) { count.withLock { $0 += 1 } }
}
