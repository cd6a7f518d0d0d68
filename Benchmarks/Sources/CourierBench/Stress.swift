import AsyncHTTPClient
import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The stall hunt of issue 15: how late do timers fire while Courier is busiest?
///
/// `CourierBench stress --url BASE --transport nio|urlsession [--streams 500] [--transfers 4]` runs, at once:
/// `--streams` streamed GETs of `BASE/stream.bin` whose consumers sleep 2 ms per chunk (slow readers, so the
/// transports must hold back), and `--transfers` loops each of a file upload (`PUT BASE/upload/N` from `BASE`'s
/// `upload.bin`, given with `--upload-file`) and a download to a file (`BASE/big.bin`). Meanwhile a repeating task
/// scheduled every 10 ms on each of NIO's event loops (the ones NIOTransport uses), a Swift task sleeping 10 ms in
/// a loop (the cooperative pool) and a Dispatch timer measure how late they fire. Prints each probe's worst and
/// 99th-percentile lateness and what the load did.
enum Stress {
    static func main(_ arguments: [String]) async throws {
        var base: URL?
        var transportName = "nio"
        var streams = 500
        var transfers = 4
        var uploadFile: URL?
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            switch flag {
            case "--url": base = rest.popFirst().flatMap(URL.init(string:))
            case "--transport": transportName = rest.popFirst() ?? transportName
            case "--streams": streams = rest.popFirst().flatMap(Int.init) ?? streams
            case "--transfers": transfers = rest.popFirst().flatMap(Int.init) ?? transfers
            case "--upload-file": uploadFile = rest.popFirst().map { URL(fileURLWithPath: $0) }
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        guard let base, let uploadFile else { throw BenchError(description: "--url and --upload-file are required") }
        let transport: any Transport = transportName == "urlsession" ? URLSessionTransport() : NIOTransport()
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120
        configuration.urlCache = nil
        let manager = SessionManager(configuration: configuration, transport: transport)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "stress.completion")

        let probes = Probes()
        probes.start()
        let started = ContinuousClock.now
        let outcome = Outcome()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<streams {
                group.addTask { await stream(base.appendingPathComponent("stream.bin"), manager, outcome) }
            }
            for index in 0..<transfers {
                group.addTask {
                    for round in 0..<3 {
                        await upload(
                            uploadFile, to: base.appendingPathComponent("upload/\(index)-\(round)"), manager, outcome)
                        await download(base.appendingPathComponent("big.bin"), manager, outcome)
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        let report = probes.stop()
        await transport.shutdown()
        print(
            "transport \(transportName): \(streams) slow streams + \(transfers)×3 uploads and downloads in \(elapsed)")
        print(outcome.summary)
        for line in report { print(line) }
    }

    // MARK: Load

    static func stream(_ url: URL, _ manager: SessionManager, _ outcome: Outcome) async {
        do {
            let response = try await manager.stream(URLRequest(url: url))
            var bytes = 0
            for try await chunk in response.chunks {
                bytes += chunk.count
                try await Task.sleep(for: .milliseconds(2))  // a slow consumer
            }
            outcome.record("stream", bytes: bytes)
        } catch {
            outcome.fail("stream", error)
        }
    }

    static func upload(_ file: URL, to url: URL, _ manager: SessionManager, _ outcome: Outcome) async {
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        let error: (any Error)? = await withCheckedContinuation { continuation in
            manager.uploadTask(with: request, fromFile: file) { _, _, error in continuation.resume(returning: error) }
                .resume()
        }
        if let error { outcome.fail("upload", error) } else { outcome.record("upload", bytes: 0) }
    }

    static func download(_ url: URL, _ manager: SessionManager, _ outcome: Outcome) async {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("stress-\(UUID()).bin")
        do {
            _ = try await manager.download(URLRequest(url: url), to: destination)
            let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? 0
            try? FileManager.default.removeItem(at: destination)
            outcome.record("download", bytes: size)
        } catch {
            outcome.fail("download", error)
        }
    }

    final class Outcome: Sendable {
        private let counts = NIOLockedValueBox([String: (done: Int, failed: Int, bytes: Int)]())
        private let firstError = NIOLockedValueBox<String?>(nil)

        func record(_ kind: String, bytes: Int) {
            counts.withLockedValue {
                $0[kind, default: (0, 0, 0)].done += 1
                $0[kind, default: (0, 0, 0)].bytes += bytes
            }
        }

        func fail(_ kind: String, _ error: any Error) {
            counts.withLockedValue { $0[kind, default: (0, 0, 0)].failed += 1 }
            firstError.withLockedValue { if $0 == nil { $0 = "\(kind): \(error)" } }
        }

        var summary: String {
            let lines = counts.withLockedValue { $0 }.sorted { $0.key < $1.key }.map {
                "  \($0.key): \($0.value.done) done, \($0.value.failed) failed, \($0.value.bytes / 1_048_576) MiB"
            }
            return (lines + (firstError.withLockedValue { $0 }.map { ["  first error: \($0)"] } ?? [])).joined(
                separator: "\n")
        }
    }

    // MARK: Probes

    /// Timers that record how late each firing was, in microseconds.
    final class Probes: Sendable {
        static let period = TimeAmount.milliseconds(10)
        private let samples = NIOLockedValueBox([String: [Int64]]())
        private let scheduled = NIOLockedValueBox<[RepeatedTask]>([])
        private let pool = NIOLockedValueBox<Task<Void, Never>?>(nil)
        private let stopped = NIOLockedValueBox(false)
        private let queue = DispatchQueue(label: "stress.probe")

        private func note(_ name: String, _ lateness: Int64) {
            samples.withLockedValue { $0[name, default: []].append(max(0, lateness)) }
        }

        func start() {
            var index = 0
            for loop in HTTPClient.defaultEventLoopGroup.makeIterator() {
                let name = "event loop \(index)"
                index += 1
                let last = NIOLockedValueBox(NIODeadline.now())
                let task = loop.scheduleRepeatedTask(initialDelay: Self.period, delay: Self.period) { _ in
                    let now = NIODeadline.now()
                    let previous = last.withLockedValue { value -> NIODeadline in
                        defer { value = now }
                        return value
                    }
                    self.note(name, (now - previous - Self.period).nanoseconds / 1000)
                }
                scheduled.withLockedValue { $0.append(task) }
            }
            pool.withLockedValue {
                $0 = Task.detached {
                    while !Task.isCancelled {
                        let before = ContinuousClock.now
                        try? await Task.sleep(for: .milliseconds(10))
                        let late = ContinuousClock.now - before - .milliseconds(10)
                        self.note(
                            "cooperative pool",
                            late.components.seconds * 1_000_000 + late.components.attoseconds / 1_000_000_000_000)
                    }
                }
            }
            scheduleDispatchProbe(after: .now())
        }

        /// A Dispatch queue's timer: asks to run 10 ms after the last firing, and notes how much later it ran.
        private func scheduleDispatchProbe(after previous: DispatchTime) {
            queue.asyncAfter(deadline: previous + .milliseconds(10)) {
                let now = DispatchTime.now()
                let late = Int64(now.uptimeNanoseconds) - Int64(previous.uptimeNanoseconds) - 10_000_000
                self.note("dispatch queue", late / 1000)
                if !self.stopped.withLockedValue({ $0 }) { self.scheduleDispatchProbe(after: now) }
            }
        }

        /// Stops the probes and describes what they saw.
        func stop() -> [String] {
            scheduled.withLockedValue { $0.forEach { $0.cancel() } }
            pool.withLockedValue { $0?.cancel() }
            stopped.withLockedValue { $0 = true }
            return samples.withLockedValue { $0 }.sorted { $0.key < $1.key }.map { name, values in
                let sorted = values.sorted()
                let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
                let worst = sorted.last ?? 0
                return
                    "  \(name): \(sorted.count) firings, lateness p99 \(Double(p99) / 1000) ms, worst \(Double(worst) / 1000) ms"
            }
        }
    }
}
