import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// GET throughput of Courier against the clients it is built on; see Benchmarks/README.md.
///
/// The clients come in compared pairs (raw, then Courier on it), measured one pair after the other. A round of a
/// pair at concurrency C: make the two clients, warm each up with C concurrent requests, then send each client's N
/// requests in `--slices` slices that alternate between them (A's first slice, B's first, then B's second, A's
/// second, …), with a 50 ms pause before each, so that both clients' N requests are spread over the same stretch of
/// time and meet the same machine conditions; then shut the two down. In a slice, C workers each send their share
/// one after another, decoding every body into ``UserPage``. A client's measurement is the sum over its slices. A
/// pair runs `--repeat` rounds at every concurrency, and the median is reported.
@main
struct CourierBench {
    static let usage = """
        usage: CourierBench --url BASE_URL [--path 1k.json] [--requests 5000] [--concurrency 1,32] [--repeat 7]
                            [--slices 5]
                            [--clients ahc,courier-nio,urlsession,courier-urlsession]
                            (diagnostic kinds: transport-nio, transport-urlsession, ahc-nio-config, ahc-delegate,
                             courier-nio-ahc)
               CourierBench --stages (--payload FILE | --url BASE_URL) [--requests 5000] [--repeat 7]
                            (where Courier's time goes, without a network)
               CourierBench cookies [--requests 200000] [--repeat 7]
                            (the Cookie field's lookup: CookieJar and HTTPCookieStorage, empty and with 20 cookies)
               CourierBench transfer upload|download|multipart courier|ahc --url URL --file PATH
                            (one large transfer, timed; run by transfers.sh)
               CourierBench http2 --url https://127.0.0.1:PORT/ --ca ROOT.pem [--path 1k.json] [--requests 10000]
                            [--concurrency 32] [--slices 5] [--status http://127.0.0.1:PORT2/status]
                            [--protocol h2|http1.1] [--trust policy|system] [--clients ahc,courier]
                            (one round over TLS, raw AsyncHTTPClient vs Courier; run by http2.sh)
               CourierBench flood --url BASE_URL --client ahc|courier-nio [--waiting 10000] [--requests 20000]
                            (thousands of requests waiting at once: memory per waiting request; run by flood.sh)
        """

    static func main() async {
        do {
            if CommandLine.arguments.dropFirst().first == "stress" {
                try await Stress.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "cookies" {
                try CookieBench.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "images" {
                try await Images.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "websocket" {
                try await WebSocketBench.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "flood" {
                try await FloodBench.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "http2" {
                try await HTTP2Bench.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            if CommandLine.arguments.dropFirst().first == "transfer" {
                try await Transfers.main(Array(CommandLine.arguments.dropFirst(2)))
                return
            }
            let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
            try await run(options)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n\(usage)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        if options.stages {
            let payload: Data
            if let file = options.payloadFile {
                payload = try Data(contentsOf: URL(fileURLWithPath: file))
            } else if let baseURL = options.baseURL {
                let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent(options.path))
                payload = data
            } else {
                throw BenchError(description: "--stages needs --payload FILE or --url")
            }
            try await Stages.run(payload: payload, iterations: options.requests, repeats: options.repeats)
            return
        }
        guard let baseURL = options.baseURL else { throw BenchError(description: "--url is required") }
        let payloadURL = baseURL.appendingPathComponent(options.path)
        try await preflight(payloadURL)
        print(
            "N=\(options.requests) GETs per measurement, concurrency \(options.concurrencies.map(String.init).joined(separator: ", ")), "
                + "\(options.repeats) round(s), median reported; each client's N sent in \(options.slices) slices alternating "
                + "with its pair's; \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print(
            "peak RSS (ru_maxrss) is a process-wide high-water mark: the value after a case includes every case before it.\n"
        )

        var results: [Key: [Measurement]] = [:]
        // The clients come in compared pairs (raw, then Courier on it). Each pair is measured on its own, all its
        // rounds before the next pair's, so that one pair's clients are never running, or winding down, during the
        // other's slices.
        for first in stride(from: 0, to: options.clients.count, by: 2) {
            let kinds = Array(options.clients[first..<min(first + 2, options.clients.count)])
            for round in 1...options.repeats {
                for concurrency in options.concurrencies {
                    let clients = kinds.map {
                        makeClient($0, baseURL: baseURL, path: options.path, payloadURL: payloadURL)
                    }
                    let measurements = try await measure(
                        clients, requests: options.requests, concurrency: concurrency, slices: options.slices)
                    for (kind, measurement) in zip(kinds, measurements) {
                        results[Key(kind: kind, concurrency: concurrency), default: []].append(measurement)
                        print(
                            "round \(round)/\(options.repeats)  c=\(pad(String(concurrency), 2))  \(padRight(kind.label, 31))"
                                + "\(pad(format(measurement.requestsPerSecond, 0), 8)) req/s  "
                                + "CPU \(format(measurement.cpuSeconds, 2)) s (\(format(measurement.cpuMicrosPerRequest, 0)) µs/req)  "
                                + "\(format(measurement.contextSwitchesPerRequest, 1)) csw/req  "
                                + "wall \(format(measurement.wallSeconds, 2)) s  peak RSS so far \(format(measurement.maxRSSMB, 1)) MB"
                        )
                    }
                }
            }
        }
        report(results, options: options)
    }

    /// One GET before anything is measured: the server answers, and the body is the ~1 KB JSON we expect.
    static func preflight(_ url: URL) async throws {
        let client = RawAsyncHTTPClient(url: url)
        let page: UserPage
        do {
            page = try await client.fetch()
        } catch {
            await client.shutdown()
            throw BenchError(description: "preflight GET \(url) failed: \(error)")
        }
        await client.shutdown()
        print("payload: \(url) → \(page.users.count) users, page \(page.page)")
    }

    // MARK: Measuring

    static func makeClient(_ kind: ClientKind, baseURL: URL, path: String, payloadURL: URL) -> any BenchClient {
        switch kind {
        case .asyncHTTPClient: RawAsyncHTTPClient(url: payloadURL)
        case .courierNIO: CourierClient<OnNIO>(baseURL: baseURL, path: path)
        case .courierNIOThroughAsyncHTTPClient:
            CourierClient<OnNIOThroughAsyncHTTPClient>(baseURL: baseURL, path: path)
        case .courierNIOObserved: CourierClient<OnNIO>(manager: observedManager(baseURL: baseURL), path: path)
        case .urlSession: RawURLSession(url: payloadURL)
        case .courierURLSession: CourierClient<OnURLSession>(baseURL: baseURL, path: path)
        case .asyncHTTPClientDelegate: RawAsyncHTTPClientDelegate(url: payloadURL)
        case .asyncHTTPClientLikeNIOTransport: RawAsyncHTTPClient(url: payloadURL, likeNIOTransport: true)
        case .transportNIO: TransportOnly<OnNIO>(url: payloadURL)
        case .transportURLSession: TransportOnly<OnURLSession>(url: payloadURL)
        }
    }

    /// One round: every client's `requests` in `slices` alternating slices (see the type's documentation); one
    /// measurement per client, in the order given. The clients are shut down at the end.
    static func measure(_ clients: [any BenchClient], requests: Int, concurrency: Int, slices: Int) async throws
        -> [Measurement]
    {
        do {
            // Warm-up: one request per worker, so every connection the run needs is open.
            for client in clients { try await load(client, requests: concurrency, concurrency: concurrency) }
            var totals = clients.map { _ in
                Measurement(requests: 0, wallSeconds: 0, cpuSeconds: 0, maxRSSMB: 0, contextSwitches: 0)
            }
            for slice in 0..<slices {
                let share = requests / slices + (slice < requests % slices ? 1 : 0)
                // Every other slice in reverse order, so that neither client always follows the other.
                let order = slice.isMultiple(of: 2) ? Array(clients.indices) : clients.indices.reversed()
                for index in order {
                    // Whatever the previous slice left running (URLSession's threads winding down) settles first.
                    try await Task.sleep(for: .milliseconds(50))
                    let before = ResourceUsage.now()
                    let start = ContinuousClock.now
                    try await load(clients[index], requests: share, concurrency: concurrency)
                    let wall = ContinuousClock.now - start
                    let after = ResourceUsage.now()
                    totals[index].requests += share
                    totals[index].wallSeconds +=
                        Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
                    totals[index].cpuSeconds += after.cpuSeconds - before.cpuSeconds
                    totals[index].contextSwitches += after.voluntaryContextSwitches - before.voluntaryContextSwitches
                    totals[index].maxRSSMB = Double(after.maxRSSKB) / 1024
                }
            }
            for client in clients { await client.shutdown() }
            return totals
        } catch {
            for client in clients { await client.shutdown() }
            throw error
        }
    }

    /// `concurrency` workers in a task group, each sending its share of `requests` one after another.
    static func load<Client: BenchClient>(_ client: Client, requests: Int, concurrency: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                let share = requests / concurrency + (worker < requests % concurrency ? 1 : 0)
                group.addTask {
                    for _ in 0..<share {
                        let page = try await client.fetch()
                        guard !page.users.isEmpty else { throw BenchError(description: "decoded no users") }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    // MARK: Reporting

    static func report(_ results: [Key: [Measurement]], options: Options) {
        print("\n## Medians of \(options.repeats) round(s), N=\(options.requests) per measurement\n")
        print(
            "| client | c | req/s (median) | req/s (all rounds) | CPU s (median) | CPU µs/req | ctx switches/req | peak RSS after case* |"
        )
        print("|---|---:|---:|---|---:|---:|---:|---:|")
        for concurrency in options.concurrencies {
            for kind in options.clients {
                guard let runs = results[Key(kind: kind, concurrency: concurrency)] else { continue }
                let rps = median(runs.map(\.requestsPerSecond))
                let cpu = median(runs.map(\.cpuSeconds))
                let rss = runs.map(\.maxRSSMB).max() ?? 0
                let switches = median(runs.map(\.contextSwitchesPerRequest))
                print(
                    "| \(kind.label) | \(concurrency) | \(format(rps, 0)) | \(runs.map { format($0.requestsPerSecond, 0) }.joined(separator: " / ")) "
                        + "| \(format(cpu, 2)) | \(format(cpu / Double(options.requests) * 1e6, 0)) | \(format(switches, 1)) "
                        + "| \(format(rss, 1)) MB |")
            }
        }
        print(
            "\n* ru_maxrss is the process-wide high-water mark, so each value includes every case measured before it.\n"
        )

        func ratio(_ courier: ClientKind, _ raw: ClientKind, _ concurrency: Int) -> Double? {
            guard let a = results[Key(kind: courier, concurrency: concurrency)],
                let b = results[Key(kind: raw, concurrency: concurrency)]
            else { return nil }
            return median(a.map(\.requestsPerSecond)) / median(b.map(\.requestsPerSecond))
        }
        func cpuRatio(_ courier: ClientKind, _ raw: ClientKind, _ concurrency: Int) -> Double? {
            guard let a = results[Key(kind: courier, concurrency: concurrency)],
                let b = results[Key(kind: raw, concurrency: concurrency)]
            else { return nil }
            return median(a.map(\.cpuSeconds)) / median(b.map(\.cpuSeconds))
        }
        // Round i of one client ran interleaved with round i of the other, so their ratio is measured under the same
        // machine conditions; the median of those ratios is less at the mercy of a slow spell than the ratio of
        // medians.
        func pairedRatios(_ courier: ClientKind, _ raw: ClientKind, _ concurrency: Int) -> [Double] {
            guard let a = results[Key(kind: courier, concurrency: concurrency)],
                let b = results[Key(kind: raw, concurrency: concurrency)]
            else { return [] }
            return zip(a, b).map { $0.requestsPerSecond / $1.requestsPerSecond }
        }
        // Issue 16's target: at least level with raw AsyncHTTPClient at c=32 and within 5 % at c=1 (both by the ratio
        // of medians and the median of round ratios), and no more CPU per request at either.
        let floors = [1: 0.95, 32: 1.0]
        var verdict: Bool? = true
        for concurrency in options.concurrencies {
            if let r = ratio(.courierNIO, .asyncHTTPClient, concurrency),
                let cpu = cpuRatio(.courierNIO, .asyncHTTPClient, concurrency)
            {
                let paired = pairedRatios(.courierNIO, .asyncHTTPClient, concurrency)
                print(
                    "c=\(pad(String(concurrency), 2)): Courier/NIOTransport ÷ raw AsyncHTTPClient = \(format(r, 2))x req/s"
                        + " (CPU \(format(cpu, 2))x);"
                        + " round by round \(paired.map { format($0, 2) }.joined(separator: " / "))"
                        + " → median \(format(median(paired), 2))x")
                let floor = floors[concurrency] ?? 1.0
                if r < floor || median(paired) < floor || cpu > 1.0 { verdict = false }
            } else {
                verdict = nil
            }
            if let r = ratio(.courierURLSession, .urlSession, concurrency) {
                print(
                    "c=\(pad(String(concurrency), 2)): Courier/URLSessionTransport ÷ raw URLSession = \(format(r, 2))x req/s"
                        + " (CPU \(format(cpuRatio(.courierURLSession, .urlSession, concurrency) ?? .nan, 2))x)")
            }
        }
        let target =
            "target: Courier/NIOTransport >= 0.95x raw AsyncHTTPClient at c=1 and >= 1.0x at c=32 (ratio of medians and"
            + " median of round ratios), CPU per request <= raw at both"
        let asked = options.concurrencies.sorted() == [1, 32]
        switch verdict {
        case .some(let pass) where asked:
            print("\(target): \(pass ? "PASS" : "FAIL")")
        default:
            print("\(target): not judged (needs both clients at c=1 and c=32)")
        }
    }
}

// MARK: Support

enum ClientKind: String, CaseIterable, Hashable {
    case asyncHTTPClient = "ahc"
    case courierNIO = "courier-nio"
    case urlSession = "urlsession"
    case courierURLSession = "courier-urlsession"
    case transportNIO = "transport-nio"
    case transportURLSession = "transport-urlsession"
    case asyncHTTPClientLikeNIOTransport = "ahc-nio-config"
    case asyncHTTPClientDelegate = "ahc-delegate"
    case courierNIOThroughAsyncHTTPClient = "courier-nio-ahc"
    case courierNIOObserved = "courier-nio-observed"

    /// What a run measures unless `--clients` says otherwise; the transport-only kinds are for diagnosis.
    static let standard: [ClientKind] = [.asyncHTTPClient, .courierNIO, .urlSession, .courierURLSession]

    var label: String {
        switch self {
        case .asyncHTTPClient: "raw AsyncHTTPClient"
        case .courierNIO: "Courier/NIOTransport"
        case .urlSession: "raw URLSession"
        case .courierURLSession: "Courier/URLSessionTransport"
        case .transportNIO: "NIOTransport.send only"
        case .transportURLSession: "URLSessionTransport.send only"
        case .asyncHTTPClientLikeNIOTransport: "raw AHC, NIOTransport's config"
        case .asyncHTTPClientDelegate: "raw AHC, delegate API"
        case .courierNIOThroughAsyncHTTPClient: "Courier/NIOTransport via AHC"
        case .courierNIOObserved: "Courier/NIO + retry, no-op obs."
        }
    }
}

struct Key: Hashable {
    var kind: ClientKind
    var concurrency: Int
}

struct Measurement {
    var requests: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    var maxRSSMB: Double
    var contextSwitches: Int

    var requestsPerSecond: Double { Double(requests) / wallSeconds }
    var cpuMicrosPerRequest: Double { cpuSeconds / Double(requests) * 1e6 }
    var contextSwitchesPerRequest: Double { Double(contextSwitches) / Double(requests) }
}

/// `getrusage(RUSAGE_SELF)`: CPU time (user + system) of the whole process, and its peak RSS.
struct ResourceUsage {
    var cpuSeconds: Double
    var maxRSSKB: Int
    /// Voluntary context switches: how often a thread of the process went to sleep waiting (for the socket, a lock,
    /// or work from another thread). Per request, a count of the thread hand-offs a request costs.
    var voluntaryContextSwitches: Int
    /// Minor page faults: pages the process touched for the first time (or again after giving them back).
    var minorFaults: Int = 0
    /// The system part of `cpuSeconds`.
    var systemSeconds: Double = 0

    static func now() -> ResourceUsage {
        var usage = rusage()
        #if canImport(Glibc)
            _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            let kilobytes = usage.ru_maxrss  // kilobytes on Linux
        #else
            _ = getrusage(RUSAGE_SELF, &usage)
            let kilobytes = usage.ru_maxrss / 1024  // bytes on Darwin
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return ResourceUsage(
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime), maxRSSKB: Int(kilobytes),
            voluntaryContextSwitches: Int(usage.ru_nvcsw), minorFaults: Int(usage.ru_minflt),
            systemSeconds: seconds(usage.ru_stime))
    }
}

struct Options {
    var baseURL: URL?
    var stages = false
    var payloadFile: String?
    var path = "1k.json"
    var requests = 5000
    var concurrencies = [1, 32]
    var repeats = 7
    var slices = 5
    var clients = ClientKind.standard

    init(arguments: [String]) throws {
        var baseURL: URL?
        var remaining = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let value = remaining.popFirst() else { throw BenchError(description: "\(flag) needs a value") }
            return value
        }
        func positive(_ flag: String, _ text: String) throws -> Int {
            guard let number = Int(text), number > 0 else {
                throw BenchError(description: "\(flag): not a positive number: \(text)")
            }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--url":
                let text = try value(flag)
                guard let url = URL(string: text), url.scheme != nil else {
                    throw BenchError(description: "bad --url \(text)")
                }
                baseURL = url
            case "--path": path = try value(flag)
            case "--stages": stages = true
            case "--payload": payloadFile = try value(flag)
            case "--requests", "-n": requests = try positive(flag, try value(flag))
            case "--repeat": repeats = try positive(flag, try value(flag))
            case "--slices": slices = try positive(flag, try value(flag))
            case "--concurrency", "-c":
                concurrencies = try value(flag).split(separator: ",").map { try positive(flag, String($0)) }
            case "--clients":
                clients = try value(flag).split(separator: ",").map {
                    guard let kind = ClientKind(rawValue: String($0)) else {
                        throw BenchError(
                            description: "unknown client \($0); known: \(ClientKind.allCases.map(\.rawValue))")
                    }
                    return kind
                }
            case "--help", "-h":
                print(CourierBench.usage)
                exit(0)
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        self.baseURL = baseURL
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func format(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "n/a" }
    if decimals == 0 {
        // Thousands separators for whole numbers, e.g. 26,298.
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0, character != "-" { out.append(",") }
            out.append(character)
        }
        return String(out.reversed())
    }
    return String(format: "%.\(decimals)f", value)
}

func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

func padRight(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
