import Dispatch
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `async` calls complete without the main queue (issue 33): a Linux program rarely runs one, and the docs
/// promise that those calls need none. `swift test` drains the main queue (a block sent to it runs), so the test
/// blocks it for the duration of the calls, with a block that gives up after a bound so a failure cannot hold the
/// suite. Serialized: two holds at once would queue one behind the other.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct MainQueueIndependenceTests {
    /// Holds the main queue: a block that waits on a semaphore until ``release()`` (or a minute, whichever comes
    /// first).
    final class MainQueueHold: Sendable {
        private let entered = Locked(false)
        private let gate = DispatchSemaphore(value: 0)

        init() {
            let entered = entered
            let gate = gate
            DispatchQueue.main.async {
                entered.withLock { $0 = true }
                _ = gate.wait(timeout: .now() + 60)
            }
        }

        /// Waits until the block runs on the main queue; `false` when it has not within `seconds` (nothing is
        /// draining the main queue then, and it is "blocked" anyway).
        func waitUntilHeld(seconds: Double) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !entered.value, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            return entered.value
        }

        func release() { gate.signal() }
    }

    /// Runs `body` in a task of its own and waits up to `seconds` for it; `nil` if it has not finished by then (the
    /// task is left to finish once the main queue is released).
    func finished<Value: Sendable>(
        within seconds: Double, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> (task: Task<Value, any Error>, done: Bool) {
        let done = Locked(false)
        let task = Task {
            defer { done.withLock { $0 = true } }
            return try await body()
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !done.value, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        return (task, done.value)
    }

    @Test(arguments: TestTransports.names)
    func asyncCallsCompleteWhileTheMainQueueIsBlocked(transport: String) async throws {
        let body = TestBytes.periodic(count: 10_000) { UInt8(truncatingIfNeeded: $0 &* 13) }
        let server = try await RangeServer.start(body)
        let kind = TestTransports.make(transport)
        let manager = HTTPSessionManager(baseURL: nil, configuration: .ephemeral, transport: kind)
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-main-queue-\(UUID().uuidString)", isDirectory: true)
        let destination = folder.appendingPathComponent("file.bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let hold = MainQueueHold()
        // Whether `swift test` drains the main queue at all: if not, the calls below prove the same without the hold.
        let held = try await hold.waitUntilHeld(seconds: 10)
        // Generous for a 10 kB loopback download on a loaded machine; without the fix the calls never finish while
        // the main queue is held, so any bound tells the two apart.
        let bound = 20.0
        let (calls, done) = try await finished(within: bound) {
            let downloaded = try await manager.download(URLRequest(url: server.fileURL), to: destination)
            let fetched = try await manager.send(URLRequest(url: server.fileURL), serializer: HTTPResponseSerializer())
            // Not resume data: the task fails as soon as it is made, through the same completion path.
            let notResumable = await thrownCourierError {
                try await manager.download(resumingWith: Data("not resume data".utf8), to: destination)
            }
            await manager.invalidateAndWait(cancelingTasks: false)
            return (downloaded.value, fetched.value, notResumable?.errorCode)
        }
        hold.release()
        #expect(done, "async calls still waiting after \(bound) s with the main queue held (held: \(held))")
        let (file, data, failure) = try await calls.value
        #expect(file == destination)
        #expect(try Data(contentsOf: destination) == body)
        #expect(data == body)
        #expect(failure == -3000)
        await kind.shutdown()
        try await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
