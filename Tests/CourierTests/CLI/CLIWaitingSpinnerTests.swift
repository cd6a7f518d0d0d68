import Foundation
import Testing

@testable import Courier

/// `courier` draws "waiting for the server…" on standard error only while a response takes longer than the
/// network-activity monitor's activation delay (1 s), and clears it before the response is printed.
@Suite(.timeLimit(.minutes(1)))
struct CLIWaitingSpinnerTests {
    @Test func aSlowResponseShowsTheSpinnerAQuickOneDoesNot() async throws {
        let slow = try await FaultServer.start(.slow(headAfter: 1.8))
        let quick = try await FaultServer.start(.countingConnections)
        let environment = ["COURIER_FORCE_PROGRESS": "1"]
        let waited = try await CourierProcess.run([slow.baseURL.absoluteString], environment: environment)
        #expect(waited.status == 0, "\(waited.stderr)")
        #expect(waited.stderr.contains("waiting for the server… 1."), "\(waited.stderr)")
        #expect(waited.stdout.contains("hello"))
        let fast = try await CourierProcess.run([quick.baseURL.absoluteString], environment: environment)
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(!fast.stderr.contains("waiting for the server"))
        #expect(fast.stdout.contains("hello"))
        try await slow.stop()
        try await quick.stop()
    }
}
