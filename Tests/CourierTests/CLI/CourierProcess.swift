import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `courier` executable as a separate process, as a user would, and collects what it printed.
struct CourierProcess {
    /// What one run printed and how it exited.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutData: Data
        /// Whether the process was killed by a signal (then ``status`` is the signal's number).
        var killedBySignal = false
        /// The largest resident set size seen (`VmHWM`, in KiB), when asked to watch it.
        var peakMemoryKiB: Int?

        /// Standard output parsed as a JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: stdoutData)
            return try #require(object as? [String: Any], "stdout is not a JSON object: \(stdout)")
        }
    }

    /// The executable `swift build --build-tests` and `swift test` put next to the test bundle.
    ///
    /// Looks in `COURIER_EXECUTABLE`, beside the `.xctest` bundle, beside the test process, and in the package's
    /// `.build/debug`; records an issue naming every place it looked when it is in none.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["COURIER_EXECUTABLE"] {
            candidates.append(URL(fileURLWithPath: path))
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("courier"))
        }
        if let program = CommandLine.arguments.first {
            candidates.append(
                URL(fileURLWithPath: program).deletingLastPathComponent().appendingPathComponent("courier"))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/courier"))
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        let looked = candidates.map(\.path).joined(separator: ", ")
        let message =
            "The courier executable was not found (looked in \(looked)). Build it with `swift build --build-tests` "
            + "(or `swift test`, which builds it), or set COURIER_EXECUTABLE."
        Issue.record(Comment(rawValue: message))
        throw CourierProcessError.notBuilt
    }

    /// Runs `courier arguments…` in `directory` with extra environment variables; kills it after `limit` seconds.
    ///
    /// - Parameters:
    ///   - stdout: where standard output goes instead of a pipe the test reads (a closed pipe, `/dev/full`).
    ///   - stdin: what the process reads as standard input (default: nothing).
    ///   - watchMemory: read the process's peak resident set size (`VmHWM`) while it runs.
    ///   - launcher: a program and its arguments that run `courier` (e.g. `setsid --wait`, for no controlling
    ///     terminal); its exit status is the one reported.
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], limit: TimeInterval = 60,
        stdout: FileHandle? = nil, stdin: FileHandle? = nil, watchMemory: Bool = false, launcher: [String] = []
    ) async throws -> Result {
        let process = Process()
        let courier = try executable()
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [courier.path] + arguments
        } else {
            process.executableURL = courier
            process.arguments = arguments
        }
        var merged = ProcessInfo.processInfo.environment
        merged["COURIER_FORCE_PROGRESS"] = nil
        merged.merge(environment) { _, new in new }
        process.environment = merged
        if let directory { process.currentDirectoryURL = directory }
        // The pipes are made close-on-exec: a process another test starts meanwhile (httpbin's supervisor, nginx)
        // must not inherit their write ends, or the reads below never see the end of the file (seen: the suite hung
        // with a `courier` zombie and httpbin's supervisor holding its stdout pipe). The child gets them through
        // dup2 onto its standard descriptors, which clears the flag there.
        let out = try ExecPipe()
        let err = try ExecPipe()
        process.standardOutput = stdout ?? out.write
        process.standardError = err.write
        process.standardInput = stdin ?? FileHandle.nullDevice

        // Pipes are drained on their own threads so a chatty process never blocks on a full pipe, and the wait is
        // a continuation so no thread of the test pool is blocked.
        let group = DispatchGroup()
        let collected = CollectedOutput()
        let peak = PeakMemory()
        // Resumed once: by the process's end (after its pipes), or by the limit plus a grace period, so a lost
        // termination or a pipe held open elsewhere fails the test instead of hanging the run.
        let resumed = ResumeOnce()
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                group.notify(queue: .global()) {
                    if resumed.claim() { continuation.resume(returning: process.terminationStatus) }
                }
            }
            do {
                try process.run()
            } catch {
                if resumed.claim() { continuation.resume(throwing: error) }
                return
            }
            // The parent's copies of the write ends, so that the readers see the end once the child has exited.
            try? out.write.close()
            try? err.write.close()
            for (pipe, isOut) in stdout == nil ? [(out, true), (err, false)] : [(err, false)] {
                group.enter()
                // A read that lasts as long as the child: off the cooperative pool (see ``OffPool``).
                OffPool.detach {
                    let data = pipe.read.readDataToEndOfFile()
                    collected.set(data, stdout: isOut)
                    group.leave()
                }
            }
            if watchMemory { peak.watch(process) }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
                if process.isRunning { process.terminate() }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit + 10) {
                if resumed.claim() {
                    continuation.resume(throwing: CourierProcessError.noEnd(pid: process.processIdentifier))
                }
            }
        }
        let (output, errors) = collected.values
        return Result(
            status: status, stdout: String(decoding: output, as: UTF8.self),
            stderr: String(decoding: errors, as: UTF8.self), stdoutData: output,
            killedBySignal: process.terminationReason == .uncaughtSignal,
            peakMemoryKiB: watchMemory ? peak.value : nil)
    }
}

enum CourierProcessError: Error {
    case notBuilt
    /// The process or its output did not end within the limit and a grace period.
    case noEnd(pid: Int32)
}

/// A pipe whose two ends are close-on-exec, so no process but the one they are handed to inherits them.
private struct ExecPipe {
    let read: FileHandle
    let write: FileHandle

    init() throws {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw CourierProcessError.noEnd(pid: -1) }
        // Glibc's module does not export pipe2; the flag follows at once (a spawn in between is unlikely, not
        // impossible, and then only delays the EOF until the limit below).
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        read = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
        write = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
    }
}

/// A flag taken once, under a lock.
///
/// `@unchecked Sendable`: `taken` is only touched under `lock`.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false

    /// `true` the first time only.
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { taken = true }
        return !taken
    }
}

/// `@unchecked Sendable`: both values are only touched under `lock`.
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var stdout = Data()
    private var stderr = Data()

    func set(_ data: Data, stdout isOut: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isOut { stdout = data } else { stderr = data }
    }

    var values: (Data, Data) {
        lock.lock()
        defer { lock.unlock() }
        return (stdout, stderr)
    }
}

/// The peak resident set size of a running process, read from `/proc/<pid>/status` every 20 ms until it exits.
///
/// `@unchecked Sendable`: `peak` is only touched under `lock`.
private final class PeakMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0

    var value: Int { lock.withLock { peak } }

    func watch(_ process: Process) {
        let path = "/proc/\(process.processIdentifier)/status"
        OffPool.detach {
            while process.isRunning {
                if let text = try? String(contentsOfFile: path, encoding: .utf8),
                    let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                    let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
                {
                    self.lock.withLock { self.peak = max(self.peak, kib) }
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }
}
