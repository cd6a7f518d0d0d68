import AsyncHTTPClient
import CoreMetrics
import Courier
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: The model every client decodes

/// One record of the 1 KB payload served by nginx (`1k.json`, written by `run.sh`).
struct User: Codable, Sendable {
    var id: Int
    var name: String
    var username: String
    var email: String
    var active: Bool
    var score: Double
    var roles: [String]
    var createdAt: String

    enum CodingKeys: String, CodingKey {
        case id, name, username, email, active, score, roles
        case createdAt = "created_at"
    }
}

/// The whole payload: a page of users.
struct UserPage: Codable, Sendable {
    var page: Int
    var perPage: Int
    var total: Int
    var users: [User]

    enum CodingKeys: String, CodingKey {
        case page, total, users
        case perPage = "per_page"
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
}

// MARK: The four clients under test

/// Connections per host for the raw clients (NIOTransport's default is also 32).
let poolSize = 32

/// A client under test: `fetch()` makes one GET of the payload and decodes it into a ``UserPage``.
protocol BenchClient: Sendable {
    func fetch() async throws -> UserPage
    /// Releases the client's connections (and, for URLSession, invalidates the session).
    func shutdown() async
}

/// (a) AsyncHTTPClient used directly: `execute` + `collect(upTo:)` + `JSONDecoder`.
final class RawAsyncHTTPClient: BenchClient {
    let client: HTTPClient
    let url: String

    /// - Parameter likeNIOTransport: configure the client the way `NIOTransport` does (redirects off, 10 s connect
    ///   timeout, gzip/deflate decompression on); a diagnostic that separates the configuration's cost from the
    ///   wrapper code's.
    init(url: URL, likeNIOTransport: Bool = false) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: poolSize)
        if likeNIOTransport {
            configuration.redirectConfiguration = .disallow
            configuration.timeout = .init(connect: .seconds(10))
            configuration.decompression = .enabled(limit: .ratio(100))
        }
        // The same event-loop group NIOTransport uses, so both run on the same threads.
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.url = url.absoluteString
    }

    func fetch() async throws -> UserPage {
        let request = HTTPClientRequest(url: url)
        let response = try await client.execute(request, timeout: .seconds(30))
        guard response.status == .ok else { throw BenchError(description: "AHC: status \(response.status.code)") }
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

/// (c) URLSession used directly: `data(for:)` + `JSONDecoder`.
final class RawURLSession: BenchClient {
    let session: URLSession
    let request: URLRequest

    init(url: URL) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = poolSize
        session = URLSession(configuration: configuration)
        request = URLRequest(url: url)
    }

    func fetch() async throws -> UserPage {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw BenchError(description: "URLSession: unexpected response \(response)")
        }
        return try JSONDecoder().decode(UserPage.self, from: data)
    }

    func shutdown() async {
        session.finishTasksAndInvalidate()
    }
}

/// (b) and (d) Courier: `HTTPSessionManager.get(_:as:)` on the given transport.
struct CourierClient<Kind: CourierTransportKind>: BenchClient {
    let manager: HTTPSessionManager
    let path: String

    init(baseURL: URL, path: String) {
        self.init(
            manager: HTTPSessionManager(baseURL: baseURL, configuration: .uncached, transport: Kind.makeTransport()),
            path: path)
    }

    init(manager: HTTPSessionManager, path: String) {
        self.manager = manager
        self.path = path
    }

    func fetch() async throws -> UserPage {
        try await manager.get(path, as: UserPage.self).value
    }

    func shutdown() async {
        manager.invalidate(cancelingTasks: false)
        await manager.transport.shutdown()
    }
}

/// `--clients courier-nio-observed`: Courier/NIOTransport with a ``RetryPolicy`` interceptor, a logger at swift-log's
/// default `.info`, swift-metrics' no-op factory and the no-op tracer: what the interceptor chain and observability
/// cost when nothing is recorded.
func observedManager(baseURL: URL) -> HTTPSessionManager {
    var configuration = SessionConfiguration.uncached
    configuration.interceptor = RetryPolicy()
    configuration.logger = Logger(label: "bench")
    configuration.metricsFactory = NOOPMetricsHandler.instance
    configuration.tracer = NoOpTracer()
    return HTTPSessionManager(baseURL: baseURL, configuration: configuration, transport: OnNIO.makeTransport())
}

extension SessionConfiguration {
    /// The default configuration without its HTTP cache: nginx's files carry an `ETag`, so the default cache would
    /// turn every request after the first into a `304` revalidation, and the raw clients fetch the whole body.
    static var uncached: SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.urlCache = nil
        return configuration
    }
}

protocol CourierTransportKind: Sendable {
    static func makeTransport() -> any Transport
}

enum OnNIO: CourierTransportKind {
    static func makeTransport() -> any Transport {
        // NIOTransport's default pool is 32 connections per host, the same as the raw client at c=32.
        NIOTransport()
    }
}

/// Diagnostic (`--clients courier-nio-ahc`): NIOTransport with its own HTTP/1.1 connections switched off, so every
/// exchange goes through AsyncHTTPClient's delegate API as before session 10.
enum OnNIOThroughAsyncHTTPClient: CourierTransportKind {
    static func makeTransport() -> any Transport {
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = false
        return NIOTransport(configuration: configuration)
    }
}

enum OnURLSession: CourierTransportKind {
    static func makeTransport() -> any Transport {
        URLSessionTransport()
    }
}

/// Diagnostic, not in the default set (`--clients transport-nio`): Courier's `NIOTransport.send` called directly,
/// without the session layer (no `HTTPSessionManager`, no task, no delegate), body gathered into `Data` and decoded.
/// The gap between this and raw AsyncHTTPClient is the transport's own cost; the gap between this and
/// Courier/NIOTransport is the session layer's.
struct TransportOnly<Kind: CourierTransportKind>: BenchClient {
    let transport: any Transport
    let url: URL

    init(url: URL) {
        transport = Kind.makeTransport()
        self.url = url
    }

    func fetch() async throws -> UserPage {
        let response = try await transport.send(TransportRequest(method: "GET", url: url))
        guard response.statusCode == 200 else {
            throw BenchError(description: "transport: status \(response.statusCode)")
        }
        var data = Data()
        for try await chunk in response.body { data.append(chunk) }
        return try JSONDecoder().decode(UserPage.self, from: data)
    }

    func shutdown() async {
        await transport.shutdown()
    }
}

/// Diagnostic, not in the default set (`--clients ahc-delegate`): AsyncHTTPClient's older delegate API
/// (`execute(request:delegate:)`) used the way `NIOTransport` collects bodies for `async` calls: the exchange is
/// started on one fixed event loop, which also runs the delegate, the body is gathered there, and the caller resumes
/// once, from the result's callback.
final class RawAsyncHTTPClientDelegate: BenchClient {
    let client: HTTPClient
    let url: String

    init(url: URL) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: poolSize)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.url = url.absoluteString
    }

    /// Gathers the head and body; its state is touched only on the task's event loop, in order, and the lock makes
    /// that visible to the thread reading the result.
    final class Gather: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = (HTTPResponseStatus, ByteBuffer)
        private let lock = NIOLock()
        private var status: HTTPResponseStatus = .ok
        private var body = ByteBuffer()

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            lock.withLock { status = head.status }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            lock.withLock {
                var buffer = buffer
                body.writeBuffer(&buffer)
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            lock.withLock { (status, body) }
        }
    }

    /// Where exchanges start and their delegates run, as in `NIOTransport`.
    let loop = HTTPClient.defaultEventLoopGroup.next()

    func fetch() async throws -> UserPage {
        let request = try HTTPClient.Request(url: url)
        let (client, loop) = (client, loop)
        let (status, body) = try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                let task = client.execute(request: request, delegate: Gather(), eventLoop: .delegate(on: loop))
                task.futureResult.whenComplete { continuation.resume(with: $0) }
            }
        }
        guard status == .ok else { throw BenchError(description: "AHC: status \(status.code)") }
        return try JSONDecoder().decode(UserPage.self, from: body)
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
