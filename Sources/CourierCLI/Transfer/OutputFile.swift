import Foundation

#if canImport(Glibc)
    import Glibc
    // The module-qualified C calls, as ``OutputFile`` has methods of the same names.
    private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
        Glibc.open(path, flags, mode)
    }
    private let systemClose = Glibc.close
#elseif canImport(Musl)
    import Musl
    private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
        Musl.open(path, flags, mode)
    }
    private let systemClose = Musl.close
#elseif canImport(Darwin)
    import Darwin
    private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
        Darwin.open(path, flags, mode)
    }
    private let systemClose = Darwin.close
#endif

/// The file a download is written to, opened in place with `open(2)` as curl and a shell's `>` do.
///
/// Nothing is renamed over the target or deleted and created again, so what `-o` names survives as what it is: a
/// symbolic link is followed (its target is written, the link stays), a hard link keeps its other names, a file
/// keeps its owner and mode (a 0600 file stays 0600), and a new file gets 0666 less the umask. A FIFO or a
/// character device (`-o /dev/stdout`, `-o /dev/null`) is written to as a stream, never truncated; anything else
/// that is not a regular file (a block device, a socket) is refused before a byte is written.
struct OutputFile: Sendable {
    /// How the file is opened.
    enum Mode: Sendable, Hashable {
        /// Truncate a regular file and write from the start (`-o`, and a resumed download the server restarted).
        case replace
        /// Write after what a regular file has (`--continue` after a `206`).
        case append
        /// Create a new file, failing if the name exists (a name chosen by the server: never overwrite).
        case createNew
    }

    /// The path as given.
    let path: String
    /// The writer for the open descriptor; ``close()`` closes it.
    let writer: DescriptorWriter
    /// Whether the target is a FIFO or a character device rather than a regular file.
    let isStream: Bool

    /// `--max-time`, for the open and every write: a FIFO nobody reads must not hold the command past it.
    struct Deadline: Sendable {
        /// When the transfer must be over.
        var instant: ContinuousClock.Instant
        /// The limit as given, for the message.
        var maxTime: TimeInterval

        /// The deadline of `limits`, when they have a `--max-time`.
        init?(_ limits: TransferLimits) {
            guard let maxTime = limits.maxTime else { return nil }
            instant = limits.started + .seconds(maxTime)
            self.maxTime = maxTime
        }

        /// The failure once it has passed, naming the file.
        func failure(_ path: String) -> CommandFailure {
            CommandFailure(
                .timedOut,
                "the transfer did not finish within --max-time \(TimeLimit.describe(maxTime)): \(path) was not "
                    + "read (a FIFO without a reader, or one that stopped reading)")
        }
    }

    /// How often opening a FIFO without a reader is tried again until the deadline.
    private static let fifoRetry: useconds_t = 20_000

    /// The deadline the file was opened under, if any.
    let deadline: Deadline?

    /// Opens `path` for writing; `nil` only in ``Mode/createNew`` when the name exists already.
    ///
    /// Opening a FIFO waits for a reader, so this runs on ``BlockingIO``'s queue. With a `deadline`, the open does
    /// not block: a FIFO without a reader is tried again until the deadline, and writes to a FIFO wait for room
    /// only until then (see ``DescriptorWriter``).
    ///
    /// - Throws: ``CommandFailure`` naming the path and the reason, or the deadline.
    static func open(_ path: String, mode: Mode, deadline: Deadline? = nil) async throws -> OutputFile? {
        try await BlockingIO.run { try openNow(path, mode: mode, deadline: deadline) }
    }

    private static func openNow(_ path: String, mode: Mode, deadline: Deadline?) throws -> OutputFile? {
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        if mode == .append { flags |= O_APPEND }
        if mode == .createNew { flags |= O_EXCL }
        // Non-blocking, a FIFO without a reader fails with ENXIO at once instead of waiting for one.
        if deadline != nil { flags |= O_NONBLOCK }
        var descriptor = path.withCString { systemOpen($0, flags, 0o666) }
        while descriptor < 0, errno == ENXIO || errno == EINTR, let deadline {
            guard ContinuousClock.now < deadline.instant else { throw deadline.failure(path) }
            usleep(fifoRetry)
            descriptor = path.withCString { systemOpen($0, flags, 0o666) }
        }
        guard descriptor >= 0 else {
            let code = errno
            if mode == .createNew, code == EEXIST { return nil }
            throw CommandFailure(.failure, "cannot write \(path): \(String(cString: strerror(code)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            _ = systemClose(descriptor)
            throw CommandFailure(.failure, "cannot write \(path): \(String(cString: strerror(code)))")
        }
        let type = status.st_mode & S_IFMT
        let isStream = type == S_IFIFO || type == S_IFCHR
        guard type == S_IFREG || isStream else {
            _ = systemClose(descriptor)
            throw CommandFailure(
                .failure, "refusing to write \(path): it is not a regular file, a FIFO or a character device")
        }
        if type == S_IFREG, mode == .replace, status.st_size > 0, ftruncate(descriptor, 0) != 0 {
            let code = errno
            _ = systemClose(descriptor)
            throw CommandFailure(.failure, "cannot truncate \(path): \(String(cString: strerror(code)))")
        }
        // Only a FIFO keeps O_NONBLOCK, its writes bounded by the deadline; a file or a device blocks as usual.
        if deadline != nil, type != S_IFIFO {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        }
        let writer = DescriptorWriter(
            descriptor: descriptor, label: "file", deadline: type == S_IFIFO ? deadline?.instant : nil)
        return OutputFile(path: path, writer: writer, isStream: isStream, deadline: deadline)
    }

    /// The size of the regular file at `path`, following symbolic links; `nil` when there is none (or it is a FIFO
    /// or a device, which cannot be resumed).
    static func regularFileSize(_ path: String) async -> Int64? {
        try? await BlockingIO.run {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            return Int64(status.st_size)
        }
    }

    /// Writes all of `data`.
    ///
    /// - Throws: ``CommandFailure`` naming the file and the reason (`No space left on device`).
    func write(_ data: Data) async throws {
        do {
            try await writer.write(data)
        } catch {
            throw failure(error)
        }
    }

    /// Writes what is buffered.
    ///
    /// - Throws: ``CommandFailure`` as ``write(_:)`` does.
    func flush() async throws {
        do {
            try await writer.drain()
        } catch {
            throw failure(error)
        }
    }

    private func failure(_ error: any Error) -> CommandFailure {
        if let deadline, (error as? WriteError)?.code == ETIMEDOUT { return deadline.failure(path) }
        return CommandFailure(.failure, "cannot write \(path): \(error)")
    }

    /// Closes the file.
    func close() async {
        await writer.close()
    }
}
