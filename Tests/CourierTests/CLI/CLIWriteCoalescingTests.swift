import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A body dripped a byte at a time is written in few `write(2)` calls, yet a stream still shows its bytes soon
/// after they arrive. The `courier` process's standard output is a `SOCK_SEQPACKET` socket, which keeps each
/// `write(2)` a message of its own, so the test counts the calls without tracing the process.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CLIWriteCoalescingTests {
    /// Each message read from a packet socket, with when it arrived.
    ///
    /// `@unchecked Sendable`: `received` is only touched under `lock`; the rest is immutable or thread-safe.
    final class Packets: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [(Data, ContinuousClock.Instant)] = []
        let writeEnd: FileHandle
        private let readEnd: Int32
        private let done = DispatchSemaphore(value: 0)

        init() throws {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            for descriptor in pair { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            readEnd = pair[0]
            writeEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
            // Read on a thread of its own: a full socket would block the writer (each message costs a buffer).
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                while true {
                    let count = recv(readEnd, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    let message = Data(buffer[0..<count])
                    lock.withLock { received.append((message, .now)) }
                }
                close(readEnd)
                done.signal()
            }
        }

        /// Closes the test's copy of the write end and waits until the reader has seen the end.
        func finish() {
            try? writeEnd.close()
            done.wait()
        }

        var messages: [(Data, ContinuousClock.Instant)] { lock.withLock { received } }
    }

    @Test func aDrippedBodyIsWrittenInFewCalls() async throws {
        // 1,000 bytes, one every 2 ms, each flushed on its own by the server.
        let server = try await FaultServer.start(.slowBody(bytes: 1000, every: 0.002))
        defer { Task { try await server.stop() } }
        let packets = try Packets()
        let result = try await CourierProcess.run(
            [server.baseURL.absoluteString], limit: 60, stdout: packets.writeEnd)
        packets.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let messages = packets.messages
        let body = messages.reduce(into: Data()) { $0.append($1.0) }
        #expect(body == Data(FaultServer.body(0..<1000)))
        // About 2 s of dripping in writes of at most 50 ms of it: some 40 calls; 200 leaves room for a slow machine
        // and is still five times fewer than one a byte (what the old writer did).
        #expect(messages.count < 200, "\(messages.count) writes for 1,000 bytes")
    }

    @Test func aPausedStreamShowsWhatArrivedBeforeThePause() async throws {
        // Two bytes 3 s apart: the first must be out long before the second arrives.
        let server = try await FaultServer.start(.slowBody(bytes: 2, every: 3))
        defer { Task { try await server.stop() } }
        let packets = try Packets()
        let result = try await CourierProcess.run(
            [server.baseURL.absoluteString], limit: 60, stdout: packets.writeEnd)
        let ended = ContinuousClock.now
        packets.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let messages = packets.messages
        #expect(messages.count == 2, "\(messages.map(\.0))")
        // The first byte was written as it came, about 3 s before the run ended: 1 s is the generous bound.
        if let first = messages.first {
            #expect(first.0 == Data("a".utf8))
            #expect(ended - first.1 > .seconds(1), "the first byte waited for the second")
        }
    }
}
