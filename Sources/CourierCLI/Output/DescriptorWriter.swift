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

/// Writes to one file descriptor from a serial dispatch queue of its own.
///
/// `write(2)` blocks (a full pipe, a slow disk, a FIFO nobody reads), and blocking one of the few threads of Swift's
/// cooperative pool would stall every task of the process, the network's included. So every write, and the other
/// blocking calls on the descriptor, run here. ``write(_:)`` returns once the bytes are written, which is the
/// backpressure: a body is read from the network no faster than it can be written. ``enqueue(_:)`` does not wait,
/// for short diagnostics; its failure is kept and thrown by the next ``write(_:)`` or ``drain()``.
///
/// No lock is held while writing: the only shared state is the first failure, read and set under its own lock.
final class DescriptorWriter: Sendable {
    /// The descriptor written to.
    let descriptor: Int32
    private let queue: DispatchQueue
    private let failure = LockedValue<WriteError?>(nil)

    /// A writer for `descriptor`, which the caller keeps open as long as it writes (``close()`` closes it).
    init(descriptor: Int32, label: String) {
        self.descriptor = descriptor
        self.queue = DispatchQueue(label: "courier.write.\(label)")
    }

    /// Standard output, shared by the whole process so its writes keep their order.
    static let standardOutput = DescriptorWriter(descriptor: STDOUT_FILENO, label: "stdout")
    /// Standard error, likewise.
    static let standardError = DescriptorWriter(descriptor: STDERR_FILENO, label: "stderr")

    /// Writes all of `data`; returns when it is written.
    ///
    /// - Throws: ``WriteError`` for this write, or for an earlier one that failed.
    func write(_ data: Data) async throws {
        try await perform { try self.writeNow(data) }
    }

    /// Queues `data` and returns at once; a failure is thrown by the next ``write(_:)`` or ``drain()``.
    func enqueue(_ data: Data) {
        queue.async {
            do {
                try self.writeNow(data)
            } catch let error as WriteError {
                self.failure.withLock { if $0 == nil { $0 = error } }
            } catch {}
        }
    }

    /// Waits for everything queued so far.
    ///
    /// - Throws: the first ``WriteError`` of a queued write.
    func drain() async throws {
        try await perform { if let failure = self.failure.withLock({ $0 }) { throw failure } }
    }

    /// Runs `body` on the writer's queue, after everything queued before it: for the other blocking calls on the
    /// descriptor (`fstat`, `ftruncate`, `close`).
    func perform<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Closes the descriptor after the queued writes.
    func close() async {
        _ = try? await perform { _ = systemClose(self.descriptor) }
    }

    /// Runs on the queue only.
    private func writeNow(_ data: Data) throws {
        if let failure = failure.withLock({ $0 }) { throw failure }
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard var pointer = buffer.baseAddress else { return }
            var left = buffer.count
            while left > 0 {
                let written = systemWrite(descriptor, pointer, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    let error = WriteError(code: errno)
                    failure.withLock { if $0 == nil { $0 = error } }
                    throw error
                }
                pointer += written
                left -= written
            }
        }
    }
}
