import Foundation
import Testing

/// A trait for tests that compute for long without awaiting (fuzzers, formatters fed big documents): their bodies
/// run on a thread of their own instead of the cooperative pool's.
///
/// The pool has one thread per core (two in CI). A debug build's second of CPU there holds back every other test's
/// tasks for that second, while their timeouts, which run on Dispatch, keep counting: a body stops being read, and a
/// resource timeout finds no bytes received. On a thread of its own, such a test shares the cores with the rest the
/// way any process does.
struct CPUBound: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Suites are scoped too; only test cases need the executor.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadExecutor()) { try await function() }
    }
}

extension Trait where Self == CPUBound {
    /// Runs the test's body on a thread of its own (see ``CPUBound``).
    static var cpuBound: Self { CPUBound() }
}

/// A task executor running jobs on a serial queue of its own, which Dispatch gives a thread outside the cooperative
/// pool's.
final class ThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "CourierTests.CPUBound")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
