import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `CourierBench flood --url BASE_URL --client ahc|courier-nio [--path 1k.json] [--waiting 10000]
/// [--requests 20000] [--marks]`: thousands of requests in flight at once, in one process, one client. Run by
/// `flood.sh`, once per client, so each has a process of its own.
///
/// 1. Warm-up: 32 concurrent requests, which open the pool's connections.
/// 2. The same client at c=32: `--requests` GETs, for the throughput to compare with.
/// 3. The process's resident memory now (`/proc/self/statm`): the idle process, pool and connections included.
/// 4. The flood: `--waiting` tasks started at once, each sending `--requests ÷ --waiting` GETs one after another, so
///    that nearly all of them wait for one of the pool's connections. A sampler reads the resident memory every
///    5 ms; the peak less the idle figure, over `--waiting`, is the memory one waiting request costs.
///
/// With `--marks`, each phase's start and end go to standard error for `perf` (see `perf-by-module.py`).
///
/// Every response is decoded into ``UserPage``; a failure fails the run. Prints a readable line and then
/// `result client=… waiting=… requests=… c32_rps=… flood_rps=… idle_kb=… peak_kb=… per_waiting_kb=… completed=…`.
enum FloodBench {
    static func main(_ arguments: [String]) async throws {
        var baseURL: URL?
        var path = "1k.json"
        var kind = ClientKind.courierNIO
        var waiting = 10_000
        var requests = 20_000
        var marks = false
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--marks" {
                marks = true
                continue
            }
            guard let value = rest.popFirst() else { throw BenchError(description: "\(flag) needs a value") }
            switch flag {
            case "--url": baseURL = URL(string: value)
            case "--path": path = value
            case "--client":
                guard let parsed = ClientKind(rawValue: value) else {
                    throw BenchError(description: "--client ahc|courier-nio (or a diagnostic kind, as in run.sh)")
                }
                kind = parsed
            case "--waiting":
                guard let number = Int(value), number > 0 else { throw BenchError(description: "--waiting N") }
                waiting = number
            case "--requests", "-n":
                guard let number = Int(value), number > 0 else { throw BenchError(description: "--requests N") }
                requests = number
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        guard let baseURL else { throw BenchError(description: "--url BASE_URL is required") }
        let client = CourierBench.makeClient(
            kind, baseURL: baseURL, path: path, payloadURL: baseURL.appendingPathComponent(path))
        try await CourierBench.load(client, requests: 32, concurrency: 32)

        let c32Mark = PerfMark()
        let c32Start = ContinuousClock.now
        let c32Usage = ResourceUsage.now()
        try await CourierBench.load(client, requests: requests, concurrency: 32)
        let c32Seconds = seconds(ContinuousClock.now - c32Start)
        c32Mark.end()
        let c32Phase = PhaseUsage(from: c32Usage, to: .now(), requests: requests)

        try await Task.sleep(for: .milliseconds(200))
        let idle = residentKB()
        let sampler = PeakSampler()
        sampler.start()
        let floodMark = PerfMark()
        let floodStart = ContinuousClock.now
        let floodUsage = ResourceUsage.now()
        // `load` gives each of `waiting` workers its share, started at once; it fails on any failed response.
        try await CourierBench.load(client, requests: requests, concurrency: waiting)
        let floodSeconds = seconds(ContinuousClock.now - floodStart)
        floodMark.end()
        if marks {
            // For `perf record -k CLOCK_MONOTONIC …` and then `perf-by-module.py … --time START,END`, one phase at a
            // time.
            FileHandle.standardError.write(Data("perf-time c32=\(c32Mark) flood=\(floodMark)\n".utf8))
        }
        let floodPhase = PhaseUsage(from: floodUsage, to: .now(), requests: requests)
        let peak = max(sampler.stop(), residentKB())
        await client.shutdown()

        let perWaiting = Double(peak - idle) / Double(waiting)
        let (c32CPUPerRequest, floodCPUPerRequest) = (c32Phase.cpuMicroseconds, floodPhase.cpuMicroseconds)
        let (c32Rate, floodRate) = (Double(requests) / c32Seconds, Double(requests) / floodSeconds)
        print(
            "\(padRight(kind.rawValue, 12)) c=32 \(format(c32Rate, 0)) req/s (CPU \(format(c32CPUPerRequest, 0)) µs/req)   "
                + "\(waiting) waiting: \(format(floodRate, 0)) req/s (CPU \(format(floodCPUPerRequest, 0)) µs/req), idle \(idle / 1024) MB, peak \(peak / 1024) MB, "
                + "\(format(perWaiting, 1)) KB per waiting request, \(requests)/\(requests) completed; "
                + "per request at c=32 / waiting: system CPU \(format(c32Phase.systemMicroseconds, 0)) / "
                + "\(format(floodPhase.systemMicroseconds, 0)) µs, page faults \(format(c32Phase.faults, 2)) / "
                + "\(format(floodPhase.faults, 2))")
        print(
            "result client=\(kind.rawValue) waiting=\(waiting) requests=\(requests) c32_rps=\(c32Rate)"
                + " flood_rps=\(floodRate) c32_cpu_us=\(c32CPUPerRequest) flood_cpu_us=\(floodCPUPerRequest) idle_kb=\(idle) peak_kb=\(peak) per_waiting_kb=\(perWaiting)"
                + " completed=\(requests)")
    }

    /// What one phase cost the process, per request.
    struct PhaseUsage {
        var cpuMicroseconds: Double
        var systemMicroseconds: Double
        /// Minor page faults per request: memory touched for the first time, or again after the allocator gave it
        /// back to the system.
        var faults: Double

        init(from start: ResourceUsage, to end: ResourceUsage, requests: Int) {
            let count = Double(requests)
            cpuMicroseconds = (end.cpuSeconds - start.cpuSeconds) * 1e6 / count
            systemMicroseconds = (end.systemSeconds - start.systemSeconds) * 1e6 / count
            faults = Double(end.minorFaults - start.minorFaults) / count
        }
    }

    /// A phase's start and end on `CLOCK_MONOTONIC`, the clock `perf record -k CLOCK_MONOTONIC` stamps samples with,
    /// written as `perf report --time` takes it.
    final class PerfMark: CustomStringConvertible {
        private let start = PerfMark.now()
        private var finish: String?

        func end() { finish = Self.now() }

        var description: String { "\(start),\(finish ?? "")" }

        private static func now() -> String {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return "\(time.tv_sec).\(String(Int(time.tv_nsec) / 1000 + 1_000_000).dropFirst())"
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The process's resident set now, in KiB (`/proc/self/statm`'s second field, in pages).
    static func residentKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// Reads the resident set every 5 ms on a thread of its own until stopped; the largest value seen.
    final class PeakSampler: @unchecked Sendable {  // `peak` and `running` only under `lock`
        private let lock = NSLock()
        private var peak = 0
        private var running = true

        func start() {
            Thread.detachNewThread {
                while self.lock.withLock({ self.running }) {
                    let now = FloodBench.residentKB()
                    self.lock.withLock { self.peak = max(self.peak, now) }
                    usleep(5_000)
                }
            }
        }

        func stop() -> Int {
            lock.withLock {
                running = false
                return peak
            }
        }
    }
}
