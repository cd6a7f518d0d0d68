import Foundation
import Testing

@testable import Courier

/// The transitions of ``URLSessionTaskStateMachine``, with strings standing for the continuations.
@Suite struct URLSessionTaskStateMachineTests {
    final class Spill {}
    typealias Machine = URLSessionTaskStateMachine<String, String, Spill>

    struct SpillFailed: Error {}

    static func bytes(_ count: Int, _ value: UInt8 = 1) -> Data { Data(repeating: value, count: count) }

    /// A machine that started and delivered its head.
    static func receiving(limit: Int = 100, _ backpressure: URLSessionBackpressure = .spillToFile) -> Machine {
        var machine = Machine(maximumBufferedBytes: limit, backpressure: backpressure)
        _ = machine.start(head: "head")
        _ = machine.receivedHead()
        return machine
    }

    @Test func theHeadIsDeliveredOnce() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        #expect(machine.start(head: "head") == .resumeTask)
        guard case .deliver(let head) = machine.receivedHead() else {
            Issue.record("the head was not delivered")
            return
        }
        #expect(head == "head")
        #expect(machine.headDelivered)
        guard case .cancelTask = machine.receivedHead() else {
            Issue.record("a second head was delivered")
            return
        }
        #expect(machine.failHead() == nil)
    }

    @Test func cancelledBeforeStartNeverResumes() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        let cancel = machine.cancel()
        #expect(cancel?.cancelTask == true)
        #expect(cancel?.head == nil)
        #expect(machine.start(head: "head") == .failCancelled)
    }

    @Test func cancelWhileWaitingAnswersTheWaitersOnceAndEveryLaterReadThrows() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        _ = machine.start(head: "head")
        let cancel = machine.cancel()
        #expect(cancel?.head == "head")
        #expect(cancel?.cancelTask == true)
        #expect(machine.cancel() == nil, "a second cancel does nothing")
        guard case .cancelTask = machine.receivedHead() else {
            Issue.record("a head was delivered after cancel")
            return
        }
        guard case .none = machine.receivedData(Self.bytes(10), makeSpill: { Spill() }) else {
            Issue.record("data was taken after cancel")
            return
        }
        guard case .end(.failure(let error), forget: false) = machine.read(waiter: "reader") else {
            Issue.record("a read after cancel did not fail")
            return
        }
        #expect(error.errorCode == -999)
    }

    @Test func aWaitingConsumerGetsTheBytesDirectlyAndASecondOneIsRefused() {
        var machine = Self.receiving()
        guard case .wait = machine.read(waiter: "first") else {
            Issue.record("an empty buffer did not wait")
            return
        }
        guard case .end(.failure(let error), forget: false) = machine.read(waiter: "second") else {
            Issue.record("a second reader was accepted")
            return
        }
        #expect(error.errorCode == -1)
        guard case .deliver(let waiter) = machine.receivedData(Self.bytes(10), makeSpill: { Spill() }) else {
            Issue.record("the waiting reader was skipped")
            return
        }
        #expect(waiter == "first")
        #expect(machine.bufferedBytes == 0)
    }

    @Test func suspendsPastTheLimitAndResumesAtHalf() {
        var machine = Self.receiving(limit: 100, .suspendTask)
        var suspensions = 0
        for _ in 0..<12 {
            if case .suspendTask = machine.receivedData(Self.bytes(10), makeSpill: { Spill() }) { suspensions += 1 }
        }
        #expect(suspensions == 1, "suspended once, when 110 bytes passed the limit of 100")
        #expect(machine.isSuspended)
        var resumedAfter: Int?
        for read in 1...12 {
            guard case .chunk(let chunk, let resume) = machine.read(waiter: nil) else {
                Issue.record("chunk \(read) missing")
                return
            }
            #expect(chunk.count == 10)
            if resume {
                #expect(resumedAfter == nil, "resumed twice")
                resumedAfter = read
            }
        }
        #expect(resumedAfter == 7, "120 − 70 = 50 bytes left: half the limit")
        guard case .wait = machine.read(waiter: nil) else {
            Issue.record("an empty buffer did not wait")
            return
        }
    }

    @Test func bytesPastTheLimitGoToTheSpillInOrderAndAreReadOnlyOnceWritten() {
        var machine = Self.receiving(limit: 100)
        var made = 0
        let makeSpill = { () -> Spill in
            made += 1
            return Spill()
        }
        for value in 0..<10 {
            guard case .none = machine.receivedData(Self.bytes(10, UInt8(value)), makeSpill: makeSpill) else {
                Issue.record("bytes within the limit were not kept in memory")
                return
            }
        }
        var offsets: [Int64] = []
        for _ in 0..<2 {
            guard
                case .writeSpill(let file, let offset) = machine.receivedData(Self.bytes(50_000), makeSpill: makeSpill)
            else {
                Issue.record("bytes past the limit were not spilled")
                return
            }
            offsets.append(offset)
            // Reported written only after the second chunk arrived: the first is readable, the second is not yet.
            if offsets.count == 1 { #expect(machine.spillWritten(50_000, to: file) == nil) }
        }
        #expect(offsets == [0, 50_000])
        #expect(made == 1)
        for value in 0..<10 {
            guard case .chunk(let chunk, _) = machine.read(waiter: nil) else {
                Issue.record("memory chunk \(value) missing")
                return
            }
            #expect(chunk.first == UInt8(value))
        }
        guard case .readSpill(_, let offset, let count) = machine.read(waiter: nil) else {
            Issue.record("the spill was not read after memory")
            return
        }
        #expect(offset == 0)
        #expect(count == 50_000)
        guard case .wait = machine.read(waiter: "reader") else {
            Issue.record("unwritten spill bytes were offered")
            return
        }
    }

    @Test func aSpillReadIsAtMost64KiB() {
        var machine = Self.receiving(limit: 1)
        guard case .writeSpill(let file, _) = machine.receivedData(Self.bytes(200_000), makeSpill: { Spill() }) else {
            Issue.record("not spilled")
            return
        }
        _ = machine.spillWritten(200_000, to: file)
        var counts: [Int] = []
        while case .readSpill(_, _, let count) = machine.read(waiter: nil) { counts.append(count) }
        #expect(counts == [65_536, 65_536, 65_536, 3_392])
    }

    @Test func aWaiterIsAnsweredWhenItsSpilledBytesAreWritten() {
        var machine = Self.receiving(limit: 10)
        _ = machine.receivedData(Self.bytes(10), makeSpill: { Spill() })
        guard case .writeSpill(let file, _) = machine.receivedData(Self.bytes(5), makeSpill: { Spill() }) else {
            Issue.record("not spilled")
            return
        }
        guard case .chunk = machine.read(waiter: nil), case .wait = machine.read(waiter: "reader") else {
            Issue.record("the memory chunk was not read first")
            return
        }
        #expect(machine.spillWritten(5, to: file) == "reader")
        guard case .wait = machine.read(waiter: nil) else {
            Issue.record("bytes handed to the waiter were offered again")
            return
        }
    }

    @Test func aSpillFileThatCannotBeMadeFailsTheBody() {
        var machine = Self.receiving(limit: 10)
        guard case .fail(let error) = machine.receivedData(Self.bytes(20), makeSpill: { throw SpillFailed() }) else {
            Issue.record("the failure was not reported")
            return
        }
        #expect(error is SpillFailed)
        #expect(machine.isCancelled)
    }

    @Test func completionWithBufferedBytesKeepsThemUntilRead() {
        var machine = Self.receiving()
        _ = machine.receivedData(Self.bytes(10), makeSpill: { Spill() })
        let completion = machine.complete(error: nil)
        #expect(!completion.forget, "a consumer still has bytes to read")
        guard case .chunk = machine.read(waiter: nil), case .end(.success, forget: true) = machine.read(waiter: nil)
        else {
            Issue.record("the body did not end after its bytes")
            return
        }
        #expect(machine.discard() == .forget)
    }

    @Test func completionAnswersTheWaiterAndForgets() {
        var machine = Self.receiving()
        _ = machine.read(waiter: "reader")
        let completion = machine.complete(error: .connectionLost(underlyingError: nil, context: CourierError.Context()))
        #expect(completion.waiter == "reader")
        #expect(completion.forget)
        #expect(completion.head == nil)
        guard case .failure(let error) = completion.outcome else {
            Issue.record("the error was lost")
            return
        }
        #expect(error.errorCode == -1005)
    }

    @Test func completionBeforeTheHeadFailsTheHead() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        _ = machine.start(head: "head")
        let completion = machine.complete(error: nil)
        #expect(completion.head == "head")
        #expect(completion.forget)
    }

    @Test func aChallengeEndingTheTaskIsTheEndOfTheBody() {
        var machine = Self.receiving()
        machine.challengeEndsTask()
        let completion = machine.complete(error: .cancelled(context: CourierError.Context()))
        guard case .success = completion.outcome else {
            Issue.record("the challenge's cancellation was reported as an error")
            return
        }
    }

    @Test func aTrustFailureIsTheErrorInsteadOfTheCancellation() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        _ = machine.start(head: "head")
        machine.trustFailed(.serverTrustEvaluationFailed(host: "h", reason: "pin"))
        let completion = machine.complete(error: .cancelled(context: CourierError.Context()))
        guard case .failure(let error) = completion.outcome else {
            Issue.record("the trust failure was lost")
            return
        }
        #expect(error.errorCode == -1202)
        #expect(completion.head == "head")
    }

    @Test func aBodyNotResentFailsTheHeadAsALostConnectionAndKeepsTheFile() {
        var machine = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        _ = machine.start(head: "head")
        let first = machine.bodyNotResent()
        let second = machine.bodyNotResent()
        #expect(first)
        #expect(!second)  // cancelled once
        // An answer to the attempt that went out without its body is not delivered.
        guard case .cancelTask = machine.receivedHead() else {
            Issue.record("the head of the bodiless attempt was delivered")
            return
        }
        let completion = machine.complete(error: .cancelled(context: CourierError.Context()))
        guard case .failure(.connectionLost(let underlying, _)) = completion.outcome else {
            Issue.record("expected connectionLost, got \(completion.outcome)")
            return
        }
        #expect(underlying is URLSessionBodyNotResentError)
        #expect(completion.head == "head")
        #expect(completion.keepsUploadFile)
        #expect(completion.forget)
    }

    @Test func aBodyNotResentAfterTheHeadOrACancellationChangesNothing() {
        var delivered = Self.receiving()
        let afterHead = delivered.bodyNotResent()
        #expect(!afterHead)
        let completed = delivered.complete(error: nil)
        #expect(!completed.keepsUploadFile)

        var cancelled = Machine(maximumBufferedBytes: 100, backpressure: .spillToFile)
        _ = cancelled.start(head: "head")
        _ = cancelled.cancel()
        let afterCancel = cancelled.bodyNotResent()
        #expect(!afterCancel)
        // Nobody waits for the head any more: the file is deleted with the task.
        let ended = cancelled.complete(error: .cancelled(context: CourierError.Context()))
        #expect(!ended.keepsUploadFile)
    }

    @Test func discardingARunningBodyDropsItsBytesAndCancels() {
        var machine = Self.receiving()
        _ = machine.receivedData(Self.bytes(10), makeSpill: { Spill() })
        #expect(machine.discard() == .cancelTask)
        #expect(machine.bufferedBytes == 0)
        #expect(machine.isCancelled)
    }
}
