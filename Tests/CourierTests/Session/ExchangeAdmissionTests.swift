import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's gate in front of its transport (`ExchangeAdmission`): no more than the transport's
/// `maximumExchangesPerOrigin` tasks of one origin reach it at once, the others wait their turn in order, and a
/// waiting request can be cancelled, time out and be invalidated like any other, on every transport.
@Suite(.timeLimit(.minutes(2)))
struct ExchangeAdmissionTests {
    static let transports = TestTransports.names

    /// A transport that lets `limit` tasks of an origin through the session's gate.
    struct GatedTransport: Transport {
        let base: any Transport
        let limit: Int

        var maximumExchangesPerOrigin: Int? { limit }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try await base.send(request)
        }

        func collect(
            _ request: TransportRequest, cancellation: ExchangeCancellation,
            activity: @escaping @Sendable () -> Void
        ) async throws -> TransportResponse {
            try await base.collect(request, cancellation: cancellation, activity: activity)
        }

        func startCollecting(
            _ request: TransportRequest, cancellation: ExchangeCancellation,
            activity: @escaping @Sendable () -> Void
        ) throws -> CollectedResponse? {
            try base.startCollecting(request, cancellation: cancellation, activity: activity)
        }

        func shutdown() async {
            await base.shutdown()
        }
    }

    /// Runs `body` with a manager whose transport (`name`) lets `limit` tasks of an origin in at once, then
    /// invalidates the manager, shuts the transport down and stops the server.
    func withGate(
        _ name: String, limit: Int, configuration: SessionConfiguration = .ephemeral,
        _ body: (HTTPSessionManager, HoldingServer) async throws -> Void
    ) async throws {
        let server = try await HoldingServer.start()
        let transport = GatedTransport(base: TestTransports.make(name), limit: limit)
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration, transport: transport)
        var failure: (any Error)?
        do {
            try await body(manager, server)
        } catch {
            failure = error
        }
        manager.invalidate(cancelingTasks: true)
        await server.stop()
        await transport.shutdown()
        if let failure { throw failure }
    }

    /// Waits until `count` tasks wait in line for `url`'s origin; whether they do.
    func waitUntilWaiting(_ count: Int, at url: URL, in manager: HTTPSessionManager) async -> Bool {
        for _ in 0..<1000 {
            if manager.core.admission?.count(for: url).waiting == count { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// With a line of 1: `/first` sent and held by the server, then `/second` waiting in line behind it.
    func holdFirstAndQueueSecond(_ manager: HTTPSessionManager, _ server: HoldingServer) async
        -> (first: Task<String, any Error>, second: Task<String, any Error>)
    {
        let first = Task { try await Self.text(manager, "/first") }
        #expect(await server.waitUntilHeld(1))
        let second = Task { try await Self.text(manager, "/second") }
        #expect(await waitUntilWaiting(1, at: server.baseURL, in: manager))
        return (first, second)
    }

    static func text(_ manager: HTTPSessionManager, _ path: String) async throws -> String {
        let response = try await manager.send("GET", path, serializer: HTTPResponseSerializer())
        return String(decoding: response.value ?? Data(), as: UTF8.self)
    }

    @Test(arguments: transports)
    func waitingRequestsReachTheTransportAFewAtATimeInTheOrderTheyCame(_ name: String) async throws {
        try await withGate(name, limit: 2) { manager, server in
            let results = Locked([String: String]())
            var tasks: [Task<Void, any Error>] = []
            for index in 1...6 {
                let path = "/r\(index)"
                tasks.append(
                    Task {
                        let body = try await Self.text(manager, path)
                        results.withLock { $0[path] = body }
                    })
                // Each enters the gate before the next, so the order in line is known.
                if index <= 2 {
                    #expect(await server.waitUntilHeld(index))
                } else {
                    #expect(await waitUntilWaiting(index - 2, at: server.baseURL, in: manager))
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.arrived == ["/r1", "/r2"])
            #expect(manager.core.admission?.count(for: server.baseURL).ticketsOut == 2)
            for expected in 3...6 {
                server.releaseOne()
                #expect(await server.waitUntilHeld(2))
                #expect(server.arrived.last == "/r\(expected)")
            }
            server.releaseAll()
            for task in tasks { try await task.value }
            #expect(server.mostHeldAtOnce == 2)
            #expect(results.value == Dictionary(uniqueKeysWithValues: (1...6).map { ("/r\($0)", "/r\($0)") }))
            #expect(await waitUntilWaiting(0, at: server.baseURL, in: manager))
            #expect(manager.core.admission?.count(for: server.baseURL).ticketsOut == 0)
        }
    }

    @Test(arguments: transports)
    func cancellingAWaitingRequestEndsItWithoutSendingIt(_ name: String) async throws {
        try await withGate(name, limit: 1) { manager, server in
            let (first, second) = await holdFirstAndQueueSecond(manager, server)
            let cancelled = Date()
            second.cancel()
            let error = await #expect(throws: CourierError.self) { try await second.value }
            #expect(error?.errorCode == CourierError.cancelled(context: .init()).errorCode)
            #expect(Date().timeIntervalSince(cancelled) < 5)
            #expect(await waitUntilWaiting(0, at: server.baseURL, in: manager))
            server.releaseAll()
            let value1 = try await first.value
            #expect(value1 == "/first")
            #expect(server.arrived == ["/first"])
            // The place the cancelled request gave up is not lost: the next request goes straight through.
            let value2 = try await Self.text(manager, "/third")
            #expect(value2 == "/third")
        }
    }

    @Test(arguments: transports)
    func aWaitingRequestTimesOutAsIfItWereSent(_ name: String) async throws {
        try await withGate(name, limit: 1) { manager, server in
            let url = server.baseURL.appendingPathComponent("held")
            let first = Task {
                try await manager.send(URLRequest(url: url, timeoutInterval: 60), serializer: HTTPResponseSerializer())
            }
            #expect(await server.waitUntilHeld(1))
            let started = Date()
            let late = URLRequest(url: server.baseURL.appendingPathComponent("late"), timeoutInterval: 0.5)
            let error = await #expect(throws: CourierError.self) {
                try await manager.send(late, serializer: HTTPResponseSerializer())
            }
            #expect(error?.errorCode == CourierError.timedOut(context: .init()).errorCode)
            #expect(error?.context?.request?.url?.lastPathComponent == "late")
            #expect(Date().timeIntervalSince(started) < 10)
            server.releaseAll()
            let value3 = try await first.value.statusCode
            #expect(value3 == 200)
            #expect(server.arrived == ["/held"])
        }
    }

    @Test(arguments: transports)
    func invalidatingTheSessionCancelsWaitingRequests(_ name: String) async throws {
        try await withGate(name, limit: 1) { manager, server in
            let (first, second) = await holdFirstAndQueueSecond(manager, server)
            manager.invalidate(cancelingTasks: true)
            for task in [first, second] {
                let error = await #expect(throws: CourierError.self) { try await task.value }
                #expect(error?.errorCode == CourierError.cancelled(context: .init()).errorCode)
            }
            #expect(server.arrived == ["/first"])
        }
    }

    @Test(arguments: transports)
    func callbackTasksWaitInLineToo(_ name: String) async throws {
        try await withGate(name, limit: 2) { manager, server in
            manager.responseSerializer = HTTPResponseSerializer()  // the body is text
            let done = Locked([String]())
            let failures = Locked([String]())
            for index in 1...5 {
                manager.get(
                    "/c\(index)", success: { _, _ in done.withLock { $0.append("/c\(index)") } },
                    failure: { _, error in failures.withLock { $0.append("\(error)") } })
            }
            #expect(await server.waitUntilHeld(2))
            #expect(await waitUntilWaiting(3, at: server.baseURL, in: manager))
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.arrived.count == 2)
            server.releaseAll()
            for _ in 0..<1000 where done.value.count + failures.value.count < 5 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(failures.value.isEmpty)
            #expect(Set(done.value) == Set((1...5).map { "/c\($0)" }))
            #expect(server.mostHeldAtOnce == 2)
        }
    }

    @Test(arguments: transports)
    func eachOriginHasItsOwnLine(_ name: String) async throws {
        let other = try await HoldingServer.start()
        other.releaseAll()
        defer { Task { await other.stop() } }
        try await withGate(name, limit: 1) { manager, server in
            let (first, second) = await holdFirstAndQueueSecond(manager, server)
            let elsewhere = other.baseURL.appendingPathComponent("elsewhere").absoluteString
            let value4 = try await Self.text(manager, elsewhere)
            #expect(value4 == "/elsewhere")
            server.releaseAll()
            let value5 = try await first.value
            #expect(value5 == "/first")
            let value6 = try await second.value
            #expect(value6 == "/second")
        }
    }

    enum Caller {
        @TaskLocal static var name = "none"
    }

    /// Notes the caller's task-local name when it serializes a response, which happens in the exchange's own Swift
    /// task for a call that waited in line.
    struct CallerNotingSerializer: ResponseSerializer {
        func serialize(response: HTTPURLResponse?, data: Data?) throws -> String { Caller.name }
    }

    /// A call that waited runs its exchange with its own task-local values (a trace's context is one), not those of
    /// the call whose answer let it in.
    @Test(arguments: transports)
    func aCallThatWaitedRunsWithItsOwnTaskLocalValues(_ name: String) async throws {
        try await withGate(name, limit: 1) { manager, server in
            let first = Task {
                try await Caller.$name.withValue("first") {
                    try await manager.send("GET", "/first", serializer: CallerNotingSerializer()).value
                }
            }
            #expect(await server.waitUntilHeld(1))
            let second = Task {
                try await Caller.$name.withValue("second") {
                    try await manager.send("GET", "/second", serializer: CallerNotingSerializer()).value
                }
            }
            #expect(await waitUntilWaiting(1, at: server.baseURL, in: manager))
            server.releaseAll()
            let firstSaw = try await first.value
            let secondSaw = try await second.value
            #expect(firstSaw == "first")
            #expect(secondSaw == "second")
        }
    }

    /// An adapter that fetches a token through the same session before the request goes out, as a token refresh
    /// does. Were its request to hold the origin's only place while it adapted, the token's request could never get
    /// in: requests whose interceptor adapts skip the gate.
    struct TokenAdapter: RequestInterceptor {
        let manager: HTTPSessionManager

        func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
            var request = request
            let token = try await ExchangeAdmissionTests.text(manager, "/token")
            request.setValue(token, forHTTPHeaderField: "X-Token")
            return request
        }
    }

    @Test(arguments: transports)
    func aRequestWhoseAdapterWaitsForAnotherRequestOfTheOriginIsNotHeldBack(_ name: String) async throws {
        try await withGate(name, limit: 1) { manager, server in
            server.releaseAll()
            let request = URLRequest(url: server.baseURL.appendingPathComponent("needs-token"))
            let response = try await manager.send(
                request, serializer: HTTPResponseSerializer(), interceptor: TokenAdapter(manager: manager))
            #expect(response.value.map { String(decoding: $0, as: UTF8.self) } == "/needs-token")
            #expect(server.arrived == ["/token", "/needs-token"])
        }
    }

    // MARK: The gate on its own

    let origin = URL(string: "http://example.test:8080/a")!

    @Test func aTicketDroppedWithoutBeingGivenBackFreesItsPlace() {
        let admission = ExchangeAdmission(limit: 1)
        do {
            guard case .admitted = admission.enter(origin) else {
                Issue.record("the first entry should be admitted")
                return
            }
        }
        #expect(admission.count(for: origin) == (0, 0))
        guard case .admitted(let ticket) = admission.enter(origin) else {
            Issue.record("the dropped ticket's place should be free")
            return
        }
        ticket.giveBack()
        ticket.giveBack()
        #expect(admission.count(for: origin) == (0, 0))
    }

    @Test func placesAreCountedPerSchemeHostAndPort() {
        let admission = ExchangeAdmission(limit: 1)
        var tickets: [ExchangeAdmission.Ticket] = []
        for url in ["http://example.test:8080/a", "http://EXAMPLE.test:8081/", "https://example.test:8080/"] {
            guard case .admitted(let ticket) = admission.enter(URL(string: url)!) else {
                Issue.record("\(url) should have a line of its own")
                return
            }
            tickets.append(ticket)
        }
        guard case .waiting(let waiter) = admission.enter(URL(string: "http://example.test:8080/other?q")!) else {
            Issue.record("the same origin should wait")
            return
        }
        waiter.cancel()
        withExtendedLifetime(tickets) {}
    }

    @Test func aWaiterAdmittedOrCancelledBeforeItAsksIsToldWhenItAsks() {
        let admission = ExchangeAdmission(limit: 1)
        guard case .admitted(let ticket) = admission.enter(origin),
            case .waiting(let admitted) = admission.enter(origin),
            case .waiting(let cancelled) = admission.enter(origin)
        else {
            Issue.record("one admitted, two waiting")
            return
        }
        cancelled.cancel()
        ticket.giveBack()
        let told = Locked([String]())
        admission.onAdmission(of: cancelled) { ticket in
            told.withLock { $0.append(ticket == nil ? "cancelled: nil" : "x") }
        }
        admission.onAdmission(of: admitted) { ticket in
            told.withLock { $0.append(ticket == nil ? "nil" : "ticket") }
            ticket?.giveBack()
        }
        #expect(told.value == ["cancelled: nil", "ticket"])
        #expect(admission.count(for: origin) == (0, 0))
    }

    /// Ten thousand waiters, each handed its ticket by the one before, which gives it back at once: the hand-overs
    /// take turns rather than nest, so the stack stays flat.
    @Test func aLongLineOfImmediateHandOversDoesNotNest() {
        let admission = ExchangeAdmission(limit: 1)
        guard case .admitted(let first) = admission.enter(origin) else {
            Issue.record("the first entry should be admitted")
            return
        }
        let told = Locked(0)
        for _ in 0..<10_000 {
            guard case .waiting(let waiter) = admission.enter(origin) else {
                Issue.record("the others should wait")
                return
            }
            admission.onAdmission(of: waiter) { ticket in
                told.withLock { $0 += 1 }
                ticket?.giveBack()
            }
        }
        first.giveBack()
        #expect(told.value == 10_000)
        #expect(admission.count(for: origin) == (0, 0))
    }
}
