import Courier
import Crypto
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The steps of `courier demo`, each a use of the library against ``DemoServer`` with its result checked.
struct Demo {
    /// What a step reports when its checks held: what happened, line by line.
    typealias Outcome = [String]

    struct Step {
        var title: String
        var run: () async throws -> Outcome
    }

    let server: DemoServer
    let console: Console
    let style: Style
    /// Callbacks of AFNetworking-style APIs run here: the main queue is not serviced while the async entry point
    /// waits.
    let queue = DispatchQueue(label: "courier.demo")

    static func start(console: Console) async throws -> Demo {
        let server = try await DemoServer.start()
        return Demo(
            server: server, console: console, style: Style(enabled: console.stdoutIsTerminal && console.colorAllowed))
    }

    func stop() async {
        await server.stop()
    }

    var steps: [Step] {
        [
            Step(title: "GET with nested parameters", run: nestedQuery),
            Step(title: "POST JSON, decoded into a Codable model", run: postJSON),
            Step(title: "A validation failure: the error body is read", run: validationFailure),
            Step(title: "A streamed response, read line by line", run: streamedLines),
            Step(title: "A request timeout", run: timeout),
            Step(title: "Multipart upload of a generated file, with a progress bar", run: multipartUpload),
            Step(title: "A download interrupted, then resumed; SHA-256 checked", run: resumedDownload),
            Step(
                title: "A batch of downloads on an operation queue (AFNetworking 2), one paused and resumed",
                run: operationBatch),
            Step(title: "HTTP caching: revalidated with If-None-Match, the 304 served from URLCache", run: cached),
            Step(title: "An image grid: duplicate downloads merged, then served from the memory cache", run: imageGrid),
            Step(title: "HTTPS with a pinned public key that matches", run: pinnedPasses),
            Step(title: "HTTPS with a pin that does not match: refused", run: pinnedRefused),
        ]
    }

    /// Runs every step, printing as it goes; `false` after the first failure.
    func run() async -> Bool {
        console.out(
            style.bold("courier demo") + ": a server is listening on \(server.baseURL.absoluteString) "
                + "(127.0.0.1 only)\n\n")
        for (number, step) in steps.enumerated() {
            console.out(style.bold("\(number + 1). \(step.title)") + "\n")
            do {
                for line in try await step.run() { console.out("   \(line)\n") }
                console.out("   " + style.green("✓ passed") + "\n\n")
            } catch {
                let message = (error as? CommandFailure)?.message ?? Self.describe(error)
                console.out("   " + style.red("✗ failed: \(message)") + "\n")
                console.err("courier: error: demo step \(number + 1) (\(step.title)) failed: \(message)\n")
                return false
            }
        }
        console.out(
            style.bold("Demo finished: all \(steps.count) steps passed.") + "\n")
        return true
    }

    static func describe(_ error: any Error) -> String {
        if let courier = error as? CourierError {
            return courier.description + (courier.failureReason.map { " (\($0))" } ?? "")
        }
        return String(describing: error)
    }

    func client(timeout: TimeInterval? = nil) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.proxy = nil  // the demo's servers are in this process, on 127.0.0.1
        if let timeout { configuration.timeoutIntervalForRequest = timeout }
        let client = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        client.completionQueue = queue
        return client
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw CommandFailure(.failure, message()) }
    }

    // MARK: Steps

    struct SearchEcho: Decodable, Sendable {
        var query: String
        var pairs: [[String]]
    }

    func nestedQuery() async throws -> Outcome {
        let parameters: Parameter = [
            "q": "swift http", "page": 2, "filter": ["tags": ["nio", "tls"], "since": 2024],
        ]
        let response = try await client().get("search", parameters: parameters, as: SearchEcho.self)
        let sent = response.request.url?.query ?? ""
        let expected =
            "filter%5Bsince%5D=2024&filter%5Btags%5D%5B%5D=nio&filter%5Btags%5D%5B%5D=tls&page=2&q=swift%20http"
        try Self.check(sent == expected, "the query string was \(sent), expected \(expected)")
        try Self.check(response.value.query == sent, "the server saw \(response.value.query), Courier sent \(sent)")
        return [
            "parameters  \(style.cyan(#"["q": "swift http", "page": 2, "filter": ["tags": ["nio", "tls"], "since": 2024]]"#))",
            "query       \(style.cyan(sent))",
            "server saw  " + response.value.pairs.map { "\($0.first ?? "")=\($0.last ?? "")" }.joined(separator: "  "),
        ]
    }

    struct NewUser: Encodable, Sendable {
        var name: String
        var email: String
    }

    struct User: Decodable, Sendable, CustomStringConvertible {
        var id: Int
        var name: String
        var email: String
        var description: String { "User(id: \(id), name: \"\(name)\", email: \"\(email)\")" }
    }

    struct Problem: Decodable, Sendable {
        var error: String
        var fields: [String: String]
    }

    func postJSON() async throws -> Outcome {
        let client = client()
        client.requestSerializer = JSONRequestSerializer(outputFormatting: [.sortedKeys])
        let parameters = try Parameter(encoding: NewUser(name: "Ada Lovelace", email: "ada@example.com"))
        let response = try await client.post("users", parameters: parameters, as: User.self)
        let body = response.request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
        try Self.check(response.statusCode == 201, "expected 201 Created, got \(response.statusCode)")
        try Self.check(response.value.name == "Ada Lovelace", "the server returned \(response.value)")
        return [
            "sent        POST /users  \(style.cyan(body))",
            "received    \(response.statusCode) Created → \(style.cyan(response.value.description))",
        ]
    }

    func validationFailure() async throws -> Outcome {
        let client = client()
        client.requestSerializer = JSONRequestSerializer()
        let parameters = try Parameter(encoding: NewUser(name: "Ada", email: "not-an-address"))
        do {
            let user = try await client.post("users", parameters: parameters, as: User.self)
            throw CommandFailure(.failure, "the server accepted an invalid address and returned \(user.value)")
        } catch let error as CourierError {
            guard case .unacceptableStatusCode(let code, _, _) = error, code == 422, let data = error.responseData
            else { throw error }
            let problem = try JSONDecoder().decode(Problem.self, from: data)
            try Self.check(problem.fields["email"] != nil, "the problem document names no email field: \(problem)")
            return [
                "error       \(style.red(error.description))",
                "error body  \(problem.error): "
                    + problem.fields.sorted(by: { $0.key < $1.key }).map { "\($0.key) \($0.value)" }.joined(
                        separator: ", "),
            ]
        }
    }

    func streamedLines() async throws -> Outcome {
        let manager = client()
        let streamed = try await manager.stream(URLRequest(url: server.baseURL.appendingPathComponent("events")))
        var lines: [String] = []
        for try await line in streamed.lines where !line.isEmpty {
            let event = try JSON(data: Data(line.utf8))
            lines.append(
                "line \(lines.count + 1)      \(style.cyan(line))  → event \(event["event"]?.stringValue ?? "?")")
        }
        try Self.check(lines.count == 3, "expected 3 lines, read \(lines.count)")
        return lines
    }

    func timeout() async throws -> Outcome {
        let started = ContinuousClock.now
        do {
            _ = try await client(timeout: 0.5).get("slow")
            throw CommandFailure(.failure, "the slow request did not time out")
        } catch let error as CourierError {
            guard case .timedOut = error else { throw error }
            let elapsed = ContinuousClock.now - started
            return [
                "GET /slow answers after 2 s; timeoutIntervalForRequest is 0.5 s",
                "error       \(style.red(error.description)) (after \(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) ms)",
            ]
        }
    }

    struct Catalog: Decodable, Sendable, Equatable {
        var items: [String]
        var version: Int
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

/// A transport that passes everything to `base` and records the status of every response, to show what went over
/// the wire.
final class StatusRecordingTransport: Transport {
    let base: any Transport
    private let recorded = LockedValue<[Int]>([])

    init(base: any Transport) {
        self.base = base
    }

    var statuses: [Int] { recorded.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await base.send(request)
        recorded.withLock { $0.append(response.statusCode) }
        return response
    }

    func shutdown() async {
        await base.shutdown()
    }
}
