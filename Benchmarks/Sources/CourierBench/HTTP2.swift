import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `CourierBench http2 --url https://127.0.0.1:PORT/ --ca root.pem [--path 1k.json] [--requests 10000]
/// [--concurrency 32] [--slices 5] [--status http://127.0.0.1:PORT2/status] [--handshakes K]`: one round of GETs over HTTP/2 with
/// TLS, raw AsyncHTTPClient against Courier on NIOTransport, each trusting the private CA in `--ca`. Run by
/// `http2.sh`, which measures curl between these rounds and takes the medians.
///
/// The round is the one ``CourierBench/measure(_:requests:concurrency:slices:)`` makes for the HTTP/1.1 pairs (both
/// clients warmed up with C concurrent requests, then each client's N in alternating slices after 50 ms pauses),
/// written out here because it also counts each client's connections between the slices, which that loop has no
/// place for. Every response, warm-up included, must have come over HTTP/2: a client that fell back to HTTP/1.1
/// would measure something else, so the round fails instead.
///
/// With `--status` (nginx's `stub_status`), the round reads the server's count of accepted connections before and
/// after each client's warm-up and slices, and, at the end, its count of open connections before and after each
/// client is shut down: how many connections each client opened, and how many carried its requests to the end.
///
/// Prints, per client, a readable line and then one for `http2.sh`:
/// `result client=ahc|courier version=HTTP/2 requests=… seconds=… cpu=… csw=… opened=… open=…` (`opened` and
/// `open` are -1 without `--status`). With `--handshakes K`, then
/// `handshake client=… version=… count=K ms=… cpu_ms=…`: what a new client's first request over a new connection
/// costs, TLS handshake included (see ``newConnections(_:labels:_:)``).
enum HTTP2Bench {
    struct Options {
        var baseURL: URL?
        var path = "1k.json"
        var caFile: String?
        var statusURL: URL?
        var requests = 10_000
        var concurrency = 32
        var slices = 5
        /// `--handshakes K`: after the round, K new clients of each kind each make one request (0: none).
        var handshakes = 0
        /// `h2` (every response must be HTTP/2) or `http1.1` (both clients HTTP/1.1 only).
        var httpProtocol = "h2"
        /// `policy`: each client is told to trust `--ca` (Courier through a `SecurityPolicy`, so through its trust
        /// gate); `system`: the CA is in the system's trust store and both clients keep their defaults.
        var trust = "policy"
        /// Which clients to run, for profiling one alone.
        var clients = ["ahc", "courier"]

        init(arguments: [String]) throws {
            var rest = arguments[...]
            while let flag = rest.popFirst() {
                guard let value = rest.popFirst() else { throw BenchError(description: "\(flag) needs a value") }
                func positive() throws -> Int {
                    guard let number = Int(value), number > 0 else {
                        throw BenchError(description: "\(flag): not a positive number: \(value)")
                    }
                    return number
                }
                switch flag {
                case "--url": baseURL = URL(string: value)
                case "--path": path = value
                case "--ca": caFile = value
                case "--status": statusURL = URL(string: value)
                case "--requests", "-n": requests = try positive()
                case "--concurrency", "-c": concurrency = try positive()
                case "--slices": slices = try positive()
                case "--handshakes": handshakes = try positive()
                case "--protocol":
                    guard ["h2", "http1.1"].contains(value) else {
                        throw BenchError(description: "--protocol h2|http1.1")
                    }
                    httpProtocol = value
                case "--trust":
                    guard ["policy", "system"].contains(value) else {
                        throw BenchError(description: "--trust policy|system")
                    }
                    trust = value
                case "--clients":
                    clients = value.split(separator: ",").map(String.init)
                    guard !clients.isEmpty, clients.allSatisfy({ ["ahc", "courier"].contains($0) }) else {
                        throw BenchError(description: "--clients ahc,courier")
                    }
                default: throw BenchError(description: "unknown argument \(flag)")
                }
            }
        }
    }

    static func main(_ arguments: [String]) async throws {
        let options = try Options(arguments: arguments)
        guard let baseURL = options.baseURL, baseURL.scheme == "https" else {
            throw BenchError(description: "--url https://HOST:PORT/ is required")
        }
        guard let caFile = options.caFile else { throw BenchError(description: "--ca ROOT.pem is required") }
        let payloadURL = baseURL.appendingPathComponent(options.path)
        let status = options.statusURL.map(NginxStatus.init(url:))
        let http2 = options.httpProtocol == "h2"
        let ca = options.trust == "policy" ? caFile : nil
        let labels = options.clients
        func makeClient(_ label: String) throws -> any BenchClient {
            if label == "ahc" { return RawAsyncHTTPClientHTTP2(url: payloadURL, caFile: ca, http2: http2) }
            return try CourierHTTP2Client(baseURL: baseURL, path: options.path, caFile: ca, http2: http2)
        }
        let clients: [any BenchClient] = try labels.map(makeClient)
        let version = http2 ? "HTTP/2" : "HTTP/1.1"
        do {
            let round = try await measure(clients, status: status, options: options)
            for (index, label) in labels.enumerated() {
                let measurement = round.measurements[index]
                let (opened, open) = (round.opened[index], round.open[index])
                print(
                    "\(padRight(label, 8)) \(version)  \(pad(format(measurement.requestsPerSecond, 0), 7)) req/s  "
                        + "CPU \(format(measurement.cpuMicrosPerRequest, 0)) µs/req  "
                        + "\(format(measurement.contextSwitchesPerRequest, 1)) csw/req  "
                        + "connections opened \(opened), open at the end \(open)")
                print(
                    "result client=\(label) version=\(version) requests=\(measurement.requests)"
                        + " seconds=\(measurement.wallSeconds) cpu=\(measurement.cpuSeconds)"
                        + " csw=\(measurement.contextSwitches) opened=\(opened) open=\(open)")
            }
        } catch {
            for client in clients { await client.shutdown() }
            await status?.shutdown()
            throw error
        }
        if options.handshakes > 0 {
            for (label, cost) in zip(labels, try await newConnections(options.handshakes, labels: labels, makeClient)) {
                print(
                    "handshake client=\(label) version=\(version) count=\(options.handshakes)"
                        + " ms=\(format(cost.wall * 1000, 2)) cpu_ms=\(format(cost.cpu * 1000, 2))")
            }
        }
        await status?.shutdown()
    }

    /// What a new connection costs each kind of client: `count` times each, in turn, a new client (its TLS context
    /// made from the CA file, as an application's first request makes it) sends one request over a new connection
    /// (TCP, the TLS handshake, ALPN) and is shut down. Returns the mean wall and CPU seconds of one, per label.
    static func newConnections(
        _ count: Int, labels: [String], _ makeClient: (String) throws -> any BenchClient
    ) async throws -> [(wall: Double, cpu: Double)] {
        var totals = labels.map { _ in (wall: 0.0, cpu: 0.0) }
        for _ in 0..<count {
            for (index, label) in labels.enumerated() {
                let before = ResourceUsage.now()
                let start = ContinuousClock.now
                let client = try makeClient(label)
                _ = try await client.fetch()
                let wall = ContinuousClock.now - start
                let after = ResourceUsage.now()
                await client.shutdown()
                totals[index].wall += Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
                totals[index].cpu += after.cpuSeconds - before.cpuSeconds
            }
        }
        return totals.map { (wall: $0.wall / Double(count), cpu: $0.cpu / Double(count)) }
    }

    /// What one round measured, per client in the order given.
    struct Round {
        var measurements: [Measurement]
        /// Connections the server accepted during the client's warm-up and slices; -1 without a status URL.
        var opened: [Int]
        /// Connections that closed when the client was shut down at the end; -1 without a status URL.
        var open: [Int]
    }

    /// One round (see the type's documentation); shuts the clients down at the end, one at a time.
    static func measure(_ clients: [any BenchClient], status: NginxStatus?, options: Options) async throws -> Round {
        let (requests, concurrency, slices) = (options.requests, options.concurrency, options.slices)
        var opened = clients.map { _ in status == nil ? -1 : 0 }
        // The status connection itself is counted by the first read, so later differences are the clients' alone.
        var accepted = try await status?.read().accepted
        // Adds the connections accepted since the last read to `client`'s count.
        func countConnections(of client: Int) async throws {
            guard let status, let before = accepted else { return }
            // A client may still be opening connections for requests that others have answered meanwhile
            // (AsyncHTTPClient's pool does, in its warm-up): they are its own, so the count waits for them to
            // settle rather than put them down to the client measured next.
            var now = try await status.read().accepted
            while true {
                try await Task.sleep(for: .milliseconds(100))
                let again = try await status.read().accepted
                if again == now { break }
                now = again
            }
            opened[client] += now - before
            accepted = now
        }
        for index in clients.indices {
            try await CourierBench.load(clients[index], requests: concurrency, concurrency: concurrency)
            try await countConnections(of: index)
        }
        var totals = clients.map { _ in
            Measurement(requests: 0, wallSeconds: 0, cpuSeconds: 0, maxRSSMB: 0, contextSwitches: 0)
        }
        for slice in 0..<slices {
            let share = requests / slices + (slice < requests % slices ? 1 : 0)
            // Every other slice in reverse order, so that neither client always follows the other.
            let order = slice.isMultiple(of: 2) ? Array(clients.indices) : clients.indices.reversed()
            for index in order {
                try await Task.sleep(for: .milliseconds(50))
                let before = ResourceUsage.now()
                let start = ContinuousClock.now
                try await CourierBench.load(clients[index], requests: share, concurrency: concurrency)
                let wall = ContinuousClock.now - start
                let after = ResourceUsage.now()
                totals[index].requests += share
                totals[index].wallSeconds +=
                    Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
                totals[index].cpuSeconds += after.cpuSeconds - before.cpuSeconds
                totals[index].contextSwitches += after.voluntaryContextSwitches - before.voluntaryContextSwitches
                totals[index].maxRSSMB = Double(after.maxRSSKB) / 1024
                try await countConnections(of: index)
            }
        }
        // A client's shutdown closes its connections; the drop in nginx's open connections is how many it still
        // had. nginx counts a close when its worker has read it, hence the pause.
        var open = clients.map { _ in -1 }
        for index in clients.indices {
            let before = try await status?.read().active
            await clients[index].shutdown()
            if let status, let before {
                try await Task.sleep(for: .milliseconds(200))
                let after = try await status.read().active
                open[index] = before - after
            }
        }
        return Round(measurements: totals, opened: opened, open: open)
    }
}

/// (a) AsyncHTTPClient used directly over HTTP/2: `execute` + `collect(upTo:)` + `JSONDecoder`, as
/// ``RawAsyncHTTPClient`` does over HTTP/1.1, trusting the benchmark's private CA.
final class RawAsyncHTTPClientHTTP2: BenchClient {
    let client: HTTPClient
    let url: String

    let http2: Bool

    /// `caFile` `nil`: the system's trust store, AsyncHTTPClient's default.
    init(url: URL, caFile: String?, http2: Bool = true) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // AsyncHTTPClient's default, spelled out: HTTP/2 when the server offers it in ALPN.
        configuration.httpVersion = http2 ? .automatic : .http1Only
        self.http2 = http2
        // As for HTTP/1.1 (and as NIOTransport's default): until ALPN has picked HTTP/2, the pool may open
        // connections for waiting requests up to this limit, so both clients start from the same rule.
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: poolSize)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.url = url.absoluteString
    }

    func fetch() async throws -> UserPage {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        guard response.status == .ok else { throw BenchError(description: "AHC: status \(response.status.code)") }
        guard response.version == (http2 ? .http2 : .http1_1) else {
            throw BenchError(description: "AHC: came over \(response.version)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONDecoder().decode(UserPage.self, from: body)
    }

    func shutdown() async {
        do {
            try await client.shutdown()
        } catch {
            print("warning: HTTPClient.shutdown failed: \(error)")
        }
    }
}

/// (b) Courier over HTTP/2: `HTTPSessionManager.get(_:as:)` on ``NIOTransport`` with
/// ``SessionConfiguration/httpVersion`` `.automatic` and a ``SecurityPolicy`` that adds the private CA to the
/// trusted roots, the path an application trusting its own CA takes: the transport's own connections evaluate the
/// policy inside each TLS handshake (no extra handshake), as they verify the system's roots under the default one.
struct CourierHTTP2Client: BenchClient {
    let manager: HTTPSessionManager
    let path: String
    let version: String

    /// `caFile` `nil`: the default policy (the system's trust store).
    init(baseURL: URL, path: String, caFile: String?, http2: Bool = true) throws {
        var configuration = SessionConfiguration.uncached
        configuration.httpVersion = http2 ? .automatic : .http1Only
        manager = HTTPSessionManager(baseURL: baseURL, configuration: configuration, transport: NIOTransport())
        if let caFile {
            var policy = SecurityPolicy(pinningMode: .none)
            policy.additionalTrustedCertificates = try SecurityPolicy.certificates(
                inFile: URL(fileURLWithPath: caFile))
            try manager.setSecurityPolicy(policy)
        }
        self.path = path
        version = http2 ? "HTTP/2" : "HTTP/1.1"
    }

    func fetch() async throws -> UserPage {
        let response = try await manager.get(path, as: UserPage.self)
        guard response.httpVersion == version else {
            throw BenchError(description: "Courier: came over \(response.httpVersion)")
        }
        return response.value
    }

    func shutdown() async {
        manager.invalidate(cancelingTasks: false)
        await manager.transport.shutdown()
    }
}

/// nginx's `stub_status` page, read over one kept-alive plain HTTP/1.1 connection, so that reading it opens no
/// connection after the first read and the server's counts differ only by the clients' connections.
final class NginxStatus: Sendable {
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    let url: String

    init(url: URL) {
        self.url = url.absoluteString
    }

    /// The connections open now (`Active connections`) and accepted since nginx started (`accepts`).
    func read() async throws -> (active: Int, accepted: Int) {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 16))
        // "Active connections: 2 \nserver accepts handled requests\n 7 7 4012 \nReading: 0 Writing: 1 Waiting: 1 \n"
        let numbers = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard response.status == .ok, numbers.count >= 4 else {
            throw BenchError(description: "unexpected stub_status page from \(url): \(text)")
        }
        return (numbers[0], numbers[1])
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
