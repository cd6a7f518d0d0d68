import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `CourierBench --stages`: where Courier's per-request time goes, without a network.
///
/// 1. Single-threaded loops over the steps of one `get(_:as:)` that do not touch the network (building the request,
///    the `HTTPURLResponse`, validation, decoding, cookies, notifications), in CPU ns per call.
/// 2. The cost of the thread hops a request makes (a new `Task`, a `DispatchQueue.async` and back).
/// 3. The whole `HTTPSessionManager.get(_:as:)` on a transport that answers from memory at once
///    (``CannedTransport``), at concurrency 1 and 32: everything Courier adds on top of the transport, JSON
///    decoding included, with no socket in the way.
enum Stages {
    static func run(payload: Data, iterations: Int, repeats: Int) async throws {
        let baseURL = URL(string: "http://127.0.0.1:8080/")!
        let url = URL(string: "http://127.0.0.1:8080/1k.json")!
        let transportResponse = CannedTransport.response(for: url, payload: payload)
        guard let http = transportResponse.makeHTTPURLResponse() else {
            throw BenchError(description: "no HTTPURLResponse")
        }
        let manager = HTTPSessionManager(
            baseURL: baseURL, configuration: .uncached, transport: CannedTransport(payload: payload))
        let serializer = DecodableResponseSerializer(UserPage.self)
        let decoder = JSONDecoder()
        let cookies = HTTPCookieStorage.shared

        print("## Stages of one request, no network (median of \(repeats) × \(iterations) calls, CPU of this thread)\n")
        print("| step | ns/call |")
        print("|---|---:|")
        func stage(_ name: String, _ body: () throws -> Void) rethrows {
            var samples: [Double] = []
            for _ in 0..<repeats {
                let start = threadCPUNanoseconds()
                for _ in 0..<iterations { try body() }
                samples.append(Double(threadCPUNanoseconds() - start) / Double(iterations))
            }
            print("| \(name) | \(format(median(samples), 0)) |")
        }
        try stage("JSONDecoder().decode(UserPage.self, from: 1 KB Data) — the work every client does") {
            _ = try JSONDecoder().decode(UserPage.self, from: payload)
        }
        try stage("  same, reusing one JSONDecoder") { _ = try decoder.decode(UserPage.self, from: payload) }
        try stage("DecodableResponseSerializer.serialize (validation + the decode above)") {
            _ = try serializer.serialize(response: http, data: payload)
        }
        try stage("DecodableResponseSerializer.validate only (status + Content-Type)") {
            try serializer.validate(response: http, data: payload)
        }
        try stage("HTTPSessionManager.url(for: \"1k.json\")") { _ = try manager.url(for: "1k.json") }
        try stage("HTTPSessionManager.makeRequest(GET, \"1k.json\") (url(for:) + HTTPRequestSerializer)") {
            _ = try manager.makeRequest(
                method: "GET", urlString: "1k.json", parameters: nil, headers: HTTPHeaderFields())
        }
        let request = try manager.makeRequest(
            method: "GET", urlString: "1k.json", parameters: nil, headers: HTTPHeaderFields())
        stage("URLRequest.allHTTPHeaderFields + sort (SessionCore.makeTransportRequest)") {
            _ = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
        }
        stage("HTTPCookieStorage.shared.cookies(for:) (empty; what makeTransportRequest called before CookieJar)") {
            _ = cookies.cookies(for: url)
        }
        let emptyJar = CookieJar()
        stage("CookieJar().cookieField(for:) (empty: the default per request)") { _ = emptyJar.cookieField(for: url) }
        // 20 cookies: 8 sent to the URL (host-only, a parent domain, several paths), 12 for other hosts and paths.
        let jar = CookieJar()
        let site = URL(string: "http://api.example.org/v1/users/1k.json")!
        for index in 0..<4 {
            jar.setCookie("host\(index)=value-\(index); Path=/v1", for: site)
            jar.setCookie("site\(index)=value-\(index); Domain=example.org; Path=/", for: site)
            jar.setCookie("other\(index)=value-\(index); Path=/admin", for: site)
            jar.setCookie("cdn\(index)=value-\(index)", for: URL(string: "http://cdn.example.org/")!)
            jar.setCookie("else\(index)=value-\(index)", for: URL(string: "http://example.com/")!)
        }
        let sent = jar.cookieField(for: site) ?? ""
        stage("CookieJar (20 cookies, 8 sent: \(sent.utf8.count) bytes).cookieField(for:)") {
            _ = jar.cookieField(for: site)
        }
        stage("TransportResponse.makeHTTPURLResponse() (9 nginx header fields)") {
            _ = transportResponse.makeHTTPURLResponse()
        }
        stage("HTTPURLResponse.value(forHTTPHeaderField: \"Content-Length\")") {
            _ = http.value(forHTTPHeaderField: "Content-Length")
        }
        stage("NotificationCenter.default.post(.taskDidComplete, userInfo: 3 keys) (no observer)") {
            NotificationCenter.default.post(
                name: .taskDidComplete, object: nil,
                userInfo: [
                    SessionNotificationKey.responseData: payload, SessionNotificationKey.serializedResponse: 1,
                    SessionNotificationKey.responseSerializer: serializer,
                ])
        }
        stage("NotificationCenter.default.post(.taskDidResume) (no observer)") {
            NotificationCenter.default.post(name: .taskDidResume, object: nil, userInfo: nil)
        }
        stage("Data(): append one 1 KB chunk (TaskDelegate.didReceive)") {
            var data = Data()
            data.append(payload)
            _ = data.count
        }

        print("\n## Thread hops (wall µs per round trip, median of \(repeats) × \(iterations / 10))\n")
        print("| hop | µs |")
        print("|---|---:|")
        let hops = max(1, iterations / 10)
        let queue = DispatchQueue(label: "bench.concurrent", attributes: .concurrent)
        var samples: [Double] = []
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            for _ in 0..<hops { _ = await Task { () -> Int in 1 }.value }
            samples.append(microseconds(ContinuousClock.now - start) / Double(hops))
        }
        print(
            "| `await Task { … }.value` (SessionCore.start makes one Task per request) | \(format(median(samples), 1)) |"
        )
        samples = []
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            for _ in 0..<hops {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async { continuation.resume() }
                }
            }
            samples.append(microseconds(ContinuousClock.now - start) / Double(hops))
        }
        print(
            "| `DispatchQueue.async` + resume a continuation (finish → processingQueue → caller) | \(format(median(samples), 1)) |"
        )

        print("\n## HTTPSessionManager.get(_:as:) on a transport that answers from memory (no socket)\n")
        print("| c | req/s (median) | CPU µs/req (median) | minus one decode = Courier's own µs/req |")
        print("|---:|---:|---:|---:|")
        var decodeSamples: [Double] = []
        for _ in 0..<repeats {
            let start = threadCPUNanoseconds()
            for _ in 0..<iterations { _ = try JSONDecoder().decode(UserPage.self, from: payload) }
            decodeSamples.append(Double(threadCPUNanoseconds() - start) / Double(iterations) / 1000)
        }
        let decodeMicros = median(decodeSamples)
        let client = CourierClient<OnCanned>(manager: manager, path: "1k.json")
        for concurrency in [1, 32] {
            var rates: [Double] = []
            var cpu: [Double] = []
            for _ in 0..<repeats {
                try await CourierBench.load(client, requests: concurrency, concurrency: concurrency)
                let before = ResourceUsage.now()
                let start = ContinuousClock.now
                try await CourierBench.load(client, requests: iterations, concurrency: concurrency)
                let wall = ContinuousClock.now - start
                let after = ResourceUsage.now()
                rates.append(Double(iterations) / (microseconds(wall) / 1e6))
                cpu.append((after.cpuSeconds - before.cpuSeconds) / Double(iterations) * 1e6)
            }
            print(
                "| \(concurrency) | \(format(median(rates), 0)) | \(format(median(cpu), 1)) | \(format(median(cpu) - decodeMicros, 1)) |"
            )
        }
        await client.shutdown()
    }

    static func threadCPUNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }
}

/// A transport that answers every request at once from memory with nginx's headers and the payload.
struct CannedTransport: Transport {
    let payload: Data

    static func response(for url: URL, payload: Data) -> TransportResponse {
        var headers = HTTPHeaderFields()
        for (name, value) in [
            ("Server", "nginx/1.22.1"), ("Date", "Sun, 22 Nov 2026 03:00:41 GMT"), ("Content-Type", "application/json"),
            ("Content-Length", String(payload.count)), ("Last-Modified", "Sun, 22 Nov 2026 02:57:33 GMT"),
            ("Connection", "keep-alive"), ("ETag", "\"6b025a1d-400\""), ("Accept-Ranges", "bytes"),
            ("X-Request-Id", "0f8fad5b-d9cb-469f-a165-70867728950e"),
        ] {
            headers.add(name: name, value: value)
        }
        return TransportResponse(
            statusCode: 200, headers: headers, url: url, httpVersion: "HTTP/1.1", body: DataChunks(payload))
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        Self.response(for: request.url, payload: payload)
    }

    func shutdown() async {}
}

enum OnCanned: CourierTransportKind {
    static func makeTransport() -> any Transport { CannedTransport(payload: Data()) }
}
