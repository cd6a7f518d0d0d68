import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``NetworkActivityMonitor``: AFNetworkActivityIndicatorManager's state machine and delays, fed by real sessions.
@Suite(.timeLimit(.minutes(1))) struct NetworkActivityMonitorTests {
    /// The visibility changes the action block reported, with when they came.
    private final class Changes: Sendable {
        private let entries = Locked([(visible: Bool, at: ContinuousClock.Instant)]())
        func add(_ visible: Bool) { entries.withLock { $0.append((visible, .now)) } }
        var all: [(visible: Bool, at: ContinuousClock.Instant)] { entries.withLock { $0 } }
    }

    /// An enabled monitor recording its visibility changes, and a session it watches as an event monitor.
    private func watchedSession() -> (NetworkActivityMonitor, Changes, HTTPSessionManager) {
        let monitor = NetworkActivityMonitor()
        monitor.isEnabled = true
        let changes = Changes()
        monitor.setNetworkingActivityActionBlock { changes.add($0) }
        var configuration = SessionConfiguration.ephemeral
        configuration.eventMonitors = [monitor]
        return (monitor, changes, HTTPSessionManager(configuration: configuration))
    }

    @Test("The phases follow AFNetworking's state machine")
    func phases() {
        typealias Phase = NetworkActivityMonitor.Phase
        #expect(Phase.notActive.afterActivityChange(occurring: true) == .delayingStart)
        #expect(Phase.notActive.afterActivityChange(occurring: false) == .notActive)
        #expect(Phase.delayingStart.afterActivityChange(occurring: false) == .delayingStart)
        #expect(Phase.delayingStart.afterActivationDelay(occurring: true) == .active)
        #expect(Phase.delayingStart.afterActivationDelay(occurring: false) == .notActive)
        #expect(Phase.active.afterActivityChange(occurring: false) == .delayingEnd)
        #expect(Phase.delayingEnd.afterActivityChange(occurring: true) == .active)
        #expect(Phase.delayingEnd.afterCompletionDelay == .notActive)
        #expect(Phase.active.afterCompletionDelay == .active)
        #expect(
            [Phase.notActive, .delayingStart, .active, .delayingEnd].map(\.isVisible) == [false, false, true, true])
    }

    @Test("The manual count never goes below zero; nothing is reported while disabled")
    func manualCount() async throws {
        let monitor = NetworkActivityMonitor()
        monitor.activationDelay = 0
        let changes = Changes()
        monitor.setNetworkingActivityActionBlock { changes.add($0) }
        monitor.incrementActivityCount()
        monitor.decrementActivityCount()
        monitor.decrementActivityCount()
        #expect(monitor.activityCount == 0)
        try await Task.sleep(for: .milliseconds(100))
        #expect(changes.all.isEmpty)
        monitor.isEnabled = true
        monitor.incrementActivityCount()
        try await waitUntil(timeout: .seconds(5)) { monitor.isNetworkActivityIndicatorVisible }
        monitor.isEnabled = false
        #expect(!monitor.isNetworkActivityIndicatorVisible)
        try await waitUntil(timeout: .seconds(5)) { changes.all.count == 2 }
        #expect(changes.all.map(\.visible) == [true, false])
    }

    @Test("A 2 s request shows the indicator after the activation delay and hides it after the completion delay")
    func longRequest() async throws {
        let url = try await HTTPBin.url("/delay/2")
        let (monitor, changes, manager) = watchedSession()
        let started = ContinuousClock.now
        _ = try await manager.get(url.absoluteString)
        let ended = ContinuousClock.now
        try await waitUntil(timeout: .seconds(5)) { changes.all.count == 2 }
        let all = changes.all
        #expect(all.map(\.visible) == [true, false])
        // Timers never fire early; the upper bounds leave room for a loaded machine (the test's own task may start
        // the request late when the suite's other tests hold the cooperative pool).
        let shown = all[0].at - started
        let hidden = all[1].at - ended
        #expect(shown >= .milliseconds(990) && shown < .seconds(3.5), "shown after \(shown)")
        #expect(hidden >= .milliseconds(160) && hidden < .seconds(2), "hidden \(hidden) after the response")
        #expect(monitor.activityCount == 0)
    }

    @Test("Ten short requests in a row never show the indicator")
    func shortRequests() async throws {
        let server = try await FaultServer.start(.slow(headAfter: 0.05))
        let (monitor, changes, manager) = watchedSession()
        let started = ContinuousClock.now
        for _ in 0..<10 {
            _ = try await manager.send(URLRequest(url: server.baseURL), serializer: HTTPResponseSerializer())
        }
        let took = ContinuousClock.now - started
        try await Task.sleep(for: .seconds(1.3))
        // Only a machine too loaded to send ten 50 ms requests within the activation delay may show it.
        if took < .milliseconds(950) {
            #expect(changes.all.isEmpty, "ten requests took \(took)")
        }
        #expect(!monitor.isNetworkActivityIndicatorVisible)
        try await server.stop()
    }

    @Test("observe(_:) counts a session's tasks in flight, from resume to completion", arguments: TestTransports.names)
    func observedSession(transport: String) async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "NetworkActivityMonitorTests")
        let monitor = NetworkActivityMonitor()
        monitor.isEnabled = true
        monitor.observe(manager)
        let tasks = (0..<3).map { _ in manager.dataTask(with: URLRequest(url: server.baseURL), completionHandler: nil) }
        tasks.forEach { $0.resume() }
        try await waitUntil(timeout: .seconds(10)) { monitor.activityCount == 3 }
        tasks[0].suspend()
        try await waitUntil(timeout: .seconds(10)) { monitor.activityCount == 2 }
        tasks.forEach { $0.cancel() }
        try await waitUntil(timeout: .seconds(10)) { monitor.activityCount == 0 }
        await manager.transport.shutdown()
        try await server.stop()
    }
}
