import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
    // The module-qualified C calls, as ``DescriptorWriter`` has methods of the same names.
    private let systemWrite = Glibc.write
    private let systemClose = Glibc.close
#elseif canImport(Musl)
    import Musl
    private let systemWrite = Musl.write
    private let systemClose = Musl.close
#elseif canImport(Darwin)
    import Darwin
    private let systemWrite = Darwin.write
    private let systemClose = Darwin.close
#endif

/// A failed `write(2)`, with its `errno`.
struct WriteError: Error, Sendable, CustomStringConvertible {
    /// The `errno` of the failed call.
    var code: Int32

    /// The reader went away (`courier URL | head`): not worth a message, as in curl and HTTPie.
    var isBrokenPipe: Bool { code == EPIPE }

    /// `No space left on device`…
    var description: String { String(cString: strerror(code)) }
}

/// Writes to one file descriptor from a serial dispatch queue of its own, coalescing small writes.
///
/// `write(2)` blocks (a full pipe, a slow disk, a FIFO nobody reads), and blocking one of the few threads of Swift's
/// cooperative pool would stall every task of the process, the network's included. So every write, and the other
/// blocking calls on the descriptor, run here.
///
/// Bytes are gathered in a buffer of ``bufferSize`` and written in one call when it fills, when ``drain()``,
/// ``perform(_:)`` or ``close()`` asks, and at most ``flushDelay`` after the first byte entered an empty buffer: a
/// body dripped one byte per chunk costs a `write(2)` per buffer, not per byte, and a stream still shows its output
/// within that delay. ``write(_:)`` returns at once while the buffer has room and waits for the write once it is
/// full, which is the backpressure: a body is read from the network no faster than it can be written, and at most a
/// buffer of it waits in memory. ``enqueue(_:)`` never waits, for short diagnostics. A failure of a write nobody
/// waited for is kept and thrown by the next ``write(_:)`` or ``drain()``.
///
/// The bytes are taken from the buffer only on the queue, so they leave in the order they came, whoever wrote them.
/// No lock is held while writing: the buffer and the first failure have locks of their own, held only to read or
/// change them.
final class DescriptorWriter: Sendable {
    /// The most bytes gathered before they are written.
    static let bufferSize = 64 * 1024
    /// The longest time a byte waits in the buffer: short enough to look immediate, long enough that a body arriving
    /// a byte at a time is written in a few hundred bytes a call.
    static let flushDelay: DispatchTimeInterval = .milliseconds(50)

    /// The descriptor written to.
    let descriptor: Int32
    private let queue: DispatchQueue
    private let failure = LockedValue<WriteError?>(nil)
    /// The bytes not yet written, and whether a timed flush is on its way.
    private let pending = LockedValue<(bytes: Data, flushScheduled: Bool)>((Data(), false))
    /// When a descriptor in non-blocking mode stops waiting for room (`--max-time`); `nil` for no limit.
    private let deadline: ContinuousClock.Instant?

    /// A writer for `descriptor`, which the caller keeps open as long as it writes (``close()`` closes it).
    ///
    /// - Parameter deadline: for a descriptor opened with `O_NONBLOCK`: a write waits for room until then, and
    ///   fails with `ETIMEDOUT` after it. A blocking descriptor waits in `write(2)` whatever it is.
    init(descriptor: Int32, label: String, deadline: ContinuousClock.Instant? = nil) {
        self.descriptor = descriptor
        self.queue = DispatchQueue(label: "courier.write.\(label)")
        self.deadline = deadline
    }

    /// Standard output, shared by the whole process so its writes keep their order.
    static let standardOutput = DescriptorWriter(descriptor: STDOUT_FILENO, label: "stdout")
    /// Standard error, likewise.
    static let standardError = DescriptorWriter(descriptor: STDERR_FILENO, label: "stderr")

    /// Adds `data` to the buffer; when that fills it, returns once the buffer is written.
    ///
    /// - Throws: ``WriteError`` for this write, or for an earlier one that failed.
    func write(_ data: Data) async throws {
        if let failure = failure.withLock({ $0 }) { throw failure }
        if gather(data) {
            try await perform { try self.flushNow() }
        }
    }

    /// Adds `data` to the buffer and returns at once; a failure is thrown by the next ``write(_:)`` or ``drain()``.
    func enqueue(_ data: Data) {
        if gather(data) {
            queue.async { try? self.flushNow() }
        }
    }

    /// Waits until everything written or queued so far is written.
    ///
    /// - Throws: the first ``WriteError`` of a write.
    func drain() async throws {
        try await perform { if let failure = self.failure.withLock({ $0 }) { throw failure } }
    }

    /// Runs `body` on the writer's queue once the buffer is written: for the other blocking calls on the descriptor
    /// (`fstat`, `ftruncate`, `close`), which must come after the bytes written before them.
    func perform<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                // A failed flush is kept in `failure`, for `drain()` and the next write; `body` runs regardless.
                try? self.flushNow()
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Closes the descriptor after the buffered writes.
    func close() async {
        _ = try? await perform { _ = systemClose(self.descriptor) }
    }

    /// Appends `data` to the buffer; `true` when the buffer is full and the caller should write it now, else a
    /// timed flush is scheduled if none is.
    private func gather(_ data: Data) -> Bool {
        guard !data.isEmpty else { return false }
        let (full, schedule) = pending.withLock { pending -> (Bool, Bool) in
            pending.bytes.append(data)
            if pending.bytes.count >= Self.bufferSize { return (true, false) }
            defer { pending.flushScheduled = true }
            return (false, !pending.flushScheduled)
        }
        if schedule {
            queue.asyncAfter(deadline: .now() + Self.flushDelay) {
                self.pending.withLock { $0.flushScheduled = false }
                try? self.flushNow()
            }
        }
        return full
    }

    /// Writes the buffer. Runs on the queue only.
    private func flushNow() throws {
        let bytes = pending.withLock { pending -> Data in
            defer { pending.bytes = Data() }
            return pending.bytes
        }
        try writeNow(bytes)
    }

    /// Runs on the queue only.
    private func writeNow(_ data: Data) throws {
        if let failure = failure.withLock({ $0 }) { throw failure }
        guard !data.isEmpty else { return }
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard var pointer = buffer.baseAddress else { return }
            var left = buffer.count
            while left > 0 {
                let written = systemWrite(descriptor, pointer, left)
                if written < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    if code == EAGAIN || code == EWOULDBLOCK, waitForRoom() { continue }
                    let error = WriteError(code: code == EAGAIN || code == EWOULDBLOCK ? ETIMEDOUT : code)
                    failure.withLock { if $0 == nil { $0 = error } }
                    throw error
                }
                pointer += written
                left -= written
            }
        }
    }

    /// Waits until the non-blocking descriptor takes bytes again; `false` once ``deadline`` has passed.
    private func waitForRoom() -> Bool {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                let (seconds, attoseconds) = left.components
                timeout = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            }
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, timeout)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }  // let write(2) report the descriptor's own error
        }
    }
}
