import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The code samples of Sources/Courier/Courier.docc/ComingFromAlamofire.md. Each block between `// sample: NAME` and
// `// end sample` appears in the article verbatim (checked by `articleShowsEverySampleVerbatim`); the tests below
// run them against servers on 127.0.0.1, except `listenForReachability(host:)` and `chat(_:url:)`, which are only
// compiled: they need a host name and a WebSocket server, and the suites of those features run the same calls.

// sample: session
/// `Session(configuration:interceptor:eventMonitors:)`, with a base URL Alamofire does not have.
func makeAPIClient(
    baseURL: URL, interceptor: any RequestInterceptor, monitors: [any EventMonitor]
) -> HTTPSessionManager {
    var configuration = SessionConfiguration.default
    configuration.timeoutIntervalForRequest = 30
    configuration.httpAdditionalHeaders = ["X-Client-Version": "1.0"]
    configuration.interceptor = interceptor
    configuration.eventMonitors = monitors
    let client = HTTPSessionManager(baseURL: baseURL, configuration: configuration)
    // The request serializer's default headers win over the configuration's: set the User-Agent there.
    var serializer = HTTPRequestSerializer()
    serializer.setValue("MyApp/1.0", forHTTPHeaderField: "User-Agent")
    client.requestSerializer = serializer
    return client
}
// end sample

// sample: decodable
struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// `AF.request(".../users/\(id)").validate().serializingDecodable(User.self).value`
func fetchUser(_ client: HTTPSessionManager, id: Int) async throws -> User {
    try await client.get("users/\(id)", as: User.self).value
}

/// `AF.request(...).validate().responseDecodable(of: User.self) { response in ... }`: callbacks use the session's
/// response serializer and run on its completion queue (the main queue unless you set one).
func loadUser(
    _ client: HTTPSessionManager, id: Int, completion: @escaping @Sendable (Result<User, any Error>) -> Void
) {
    client.responseSerializer = DecodableResponseSerializer(User.self)
    client.get(
        "users/\(id)",
        success: { task, object in
            if let user = object as? User { completion(.success(user)) }
        },
        failure: { task, error in
            completion(.failure(error))
        })
}
// end sample

// sample: validation
enum LookupError: Error {
    case status(Int)
    case contentType(String?)
    case other(any Error)
}

/// `.validate(statusCode: 200..<300).validate(contentType: ["application/json"])` and the `AFError` cases it
/// throws, `.responseValidationFailed(reason: .unacceptableStatusCode(code:))` and `.unacceptableContentType`.
func lookUpUser(_ client: HTTPSessionManager, id: Int) async -> Result<User, LookupError> {
    let serializer = DecodableResponseSerializer(
        User.self, acceptableStatusCodes: IndexSet(integersIn: 200..<300), acceptableContentTypes: ["application/json"])
    do {
        return .success(try await client.send("GET", "users/\(id)", serializer: serializer).value)
    } catch CourierError.unacceptableStatusCode(let code, _, _) {
        return .failure(.status(code))
    } catch CourierError.unacceptableContentType(let type, _, _) {
        return .failure(.contentType(type))
    } catch {
        return .failure(.other(error))
    }
}
// end sample

// sample: interceptor
/// A `RequestAdapter`: `adapt(_:for:session:completion:)` becomes an `async throws` function.
struct BearerToken: RequestInterceptor {
    let token: String

    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// `Interceptor(adapters: [...], retriers: [RetryPolicy()])`
func retryingInterceptor(token: String) -> Interceptor {
    Interceptor(adapters: [BearerToken(token: token)], retriers: [RetryPolicy(retryLimit: 3)])
}
// end sample

// sample: authenticator
struct OAuthCredential: AuthenticationCredential {
    var accessToken: String
    var refreshToken: String
    var expiration: Date

    // Refresh a minute before the token expires rather than after a 401.
    var requiresRefresh: Bool { Date(timeIntervalSinceNow: 60) > expiration }
}

struct OAuthAuthenticator: CredentialAuthenticator {
    /// Your token endpoint: a refresh token in, a new credential out.
    let refreshTokens: @Sendable (String) async throws -> OAuthCredential

    func apply(_ credential: OAuthCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.accessToken)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: OAuthCredential, for task: SessionTask) async throws -> OAuthCredential {
        try await refreshTokens(credential.refreshToken)
    }

    func didRequest(
        _ request: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError
    ) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ request: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.accessToken)"
    }
}
// end sample

// sample: trust
/// `ServerTrustManager(allHostsMustBeEvaluated: true, evaluators: ["api.example.com": PublicKeysTrustEvaluator(...),
/// "cdn.example.com": DefaultTrustEvaluator()])`
func makePinnedClient(apiKeyHashes: [String]) throws -> HTTPSessionManager {
    let client = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/"))
    let policies = SecurityPolicies(
        hostPolicies: [
            "api.example.com": try SecurityPolicy(pinnedPublicKeyHashesBase64: apiKeyHashes),
            "cdn.example.com": .default,
        ],
        allHostsMustBeEvaluated: true)
    try client.setSecurityPolicies(policies)
    return client
}
// end sample

// sample: monitor
/// A `ClosureEventMonitor`-style monitor: implement only the events you watch.
struct StatusLogger: EventMonitor {
    let log: @Sendable (String) -> Void

    func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse) {
        log("\(task.originalRequest?.httpMethod ?? "GET") \(response.url?.path ?? "") \(response.statusCode)")
    }

    func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
        log("retrying after \(delay): \(error.errorCode)")
    }
}
// end sample

// sample: redirects
/// `Redirector.doNotFollow` and `ResponseCacher.doNotCache`, session-wide.
func locationOfRedirect(_ client: HTTPSessionManager, path: String) async throws -> String? {
    var hooks = client.hooks
    hooks.willPerformRedirection = { _, _, _ in nil }  // deliver the 3xx as it is
    hooks.willCacheResponse = { _, _ in nil }  // store nothing in the URL cache
    client.hooks = hooks
    let response = try await client.send("GET", path, serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
    return response.response.value(forHTTPHeaderField: "Location")
}
// end sample

// sample: parameters
struct SearchQuery: Encodable {
    var userName: String
    var tags: [String]
    var includeArchived: Bool
}

/// `URLEncodedFormParameterEncoder(encoder: URLEncodedFormEncoder(arrayEncoding: .noBrackets,
/// boolEncoding: .literal, keyEncoding: .convertToSnakeCase))`
func searchRequest(_ query: SearchQuery) throws -> URLRequest {
    var serializer = HTTPRequestSerializer()
    serializer.arrayEncoding = .noBrackets
    serializer.boolEncoding = .literal
    let parameters = try Parameter(encoding: query, encoder: ParameterEncoder(keyEncodingStrategy: .convertToSnakeCase))
    return try serializer.request(method: "GET", urlString: "https://api.example.com/search", parameters: parameters)
}

/// `JSONParameterEncoder.sortedKeys`
func createUserRequest(_ user: User) throws -> URLRequest {
    let serializer = JSONRequestSerializer(outputFormatting: .sortedKeys)
    return try serializer.request(
        method: "POST", urlString: "https://api.example.com/users", parameters: try Parameter(encoding: user))
}
// end sample

// sample: transfers
struct UploadReceipt: Decodable, Sendable {
    var id: String
}

/// `AF.upload(multipartFormData: { form in ... }, to: ...).serializingDecodable(UploadReceipt.self)`
func uploadDocument(_ client: HTTPSessionManager, pdf: Data, fileName: String) async throws -> UploadReceipt {
    try await client.post("documents", as: UploadReceipt.self) { form in
        form.append(pdf, name: "file", fileName: fileName, mimeType: "application/pdf")
        form.append(Data("quarterly".utf8), name: "title")
    }.value
}

/// `AF.download(..., to: destination).serializingDownloadedFileURL()`
func downloadExport(_ client: HTTPSessionManager, to file: URL) async throws -> URL {
    try await client.download(
        "exports/latest", to: file, options: [.createIntermediateDirectories, .removePreviousFile]
    ).value
}

/// `AF.streamRequest(...).streamingStrings()`, a line at a time.
func tailLog(_ client: HTTPSessionManager) async throws -> [String] {
    var lines: [String] = []
    for try await line in try await client.stream("logs/tail").lines {
        lines.append(line)
    }
    return lines
}
// end sample

// sample: errors
/// Where an `AFError` switch goes.
func userMessage(for error: any Error) -> String {
    guard let error = error as? CourierError else { return error.localizedDescription }
    switch error {
    case .cancelled:  // .explicitlyCancelled
        return "Cancelled."
    case .unacceptableStatusCode(let code, _, _):  // .responseValidationFailed(reason: .unacceptableStatusCode)
        return "The server answered \(code)."
    case .timedOut, .cannotConnect, .connectionLost:  // .sessionTaskFailed(error: URLError)
        return "Check your connection."
    case .serverTrustEvaluationFailed(let host, _):  // .serverTrustEvaluationFailed(reason:)
        return "\(host) could not prove who it is."
    default:
        return error.localizedDescription
    }
}
// end sample

// sample: metrics
/// `response.metrics` (`URLSessionTaskMetrics`, always `nil` on Linux in Alamofire).
func describeConnection(_ client: HTTPSessionManager, path: String) async throws -> String {
    let response = try await client.get(path)
    guard let transaction = response.taskMetrics?.transactionMetrics.last else { return "no metrics" }
    let connection = transaction.isReusedConnection ? "reused" : "new"
    return "\(transaction.networkProtocolName ?? "unknown protocol"), \(connection) connection"
}
// end sample

// sample: reachability
/// `NetworkReachabilityManager(host:)?.startListening { status in ... }`
func listenForReachability(host: String) -> ReachabilityManager {
    let reachability = ReachabilityManager(domain: host)
    reachability.startMonitoring()
    Task {
        for await status in reachability.statusUpdates {
            print("network: \(status)")
        }
    }
    return reachability
}
// end sample

// sample: websocket
/// Alamofire's WebSocket support is SPI, on Apple platforms only.
func chat(_ manager: SessionManager, url: URL) async throws -> WebSocketMessage {
    let socket = manager.webSocketTask(with: URLRequest(url: url))
    try await socket.send(.string("hello"))
    let reply = try await socket.receive()
    await socket.cancel(with: .normalClosure, reason: "done")
    return reply
}
// end sample

@Suite struct ComingFromAlamofireTests {
    private static let json = [("Content-Type", "application/json")]

    private func client(_ server: ScriptedServer, interceptor: (any RequestInterceptor)? = nil) -> HTTPSessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = interceptor
        let client = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
        client.completionQueue = DispatchQueue(label: "ComingFromAlamofireTests")
        return client
    }

    @Test func decodableAsyncAndCallback() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: Self.json, body: #"{"id":1,"name":"bang"}"#)
        ])
        let client = client(server)
        #expect(try await fetchUser(client, id: 1) == User(id: 1, name: "bang"))
        let result = await withCheckedContinuation { continuation in
            loadUser(client, id: 1) { continuation.resume(returning: $0) }
        }
        #expect((try? result.get()) == User(id: 1, name: "bang"))
        #expect(server.received.map(\.path) == ["/users/1", "/users/1"])
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func validationFailuresBecomeCases() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 404, headers: Self.json, body: #"{"error":"no such user"}"#),
            .init(status: 200, headers: [("Content-Type", "text/html")], body: "<p>maintenance</p>"),
        ])
        let client = client(server)
        guard case .failure(.status(404)) = await lookUpUser(client, id: 9) else {
            Issue.record("a 404 was not a status failure")
            return
        }
        guard case .failure(.contentType("text/html")) = await lookUpUser(client, id: 9) else {
            Issue.record("text/html was not a content-type failure")
            return
        }
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func interceptorAdaptsEveryAttemptAndRetries() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 503, body: ""), .init(status: 503, body: ""),
            .init(status: 200, headers: Self.json, body: #"{"id":2,"name":"retried"}"#),
        ])
        let lines = Collected<String>()
        let client = makeAPIClient(
            baseURL: server.baseURL, interceptor: retryingInterceptor(token: "abc"),
            monitors: [StatusLogger(log: { lines.append($0) })])
        #expect(try await fetchUser(client, id: 2) == User(id: 2, name: "retried"))
        #expect(server.received.count == 3)
        #expect(server.received.allSatisfy { $0.headers["authorization"] == "Bearer abc" })
        #expect(server.received.allSatisfy { $0.headers["user-agent"] == "MyApp/1.0" })
        #expect(server.received.allSatisfy { $0.headers["x-client-version"] == "1.0" })
        try await waitUntil { lines.values.count == 3 }
        #expect(lines.values.first?.hasPrefix("retrying after") == true)
        #expect(lines.values.last == "GET /users/2 200")
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func authenticatorRefreshesOnceAndRetries() async throws {
        let server = try await ScriptedServer.start { _, received in
            received.headers["authorization"] == "Bearer fresh"
                ? .init(status: 200, headers: Self.json, body: #"{"id":3,"name":"authenticated"}"#)
                : .init(status: 401, body: "")
        }
        let refreshes = Collected<String>()
        let authenticator = OAuthAuthenticator { refreshToken in
            refreshes.append(refreshToken)
            return OAuthCredential(accessToken: "fresh", refreshToken: "r2", expiration: .distantFuture)
        }
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: OAuthCredential(accessToken: "stale", refreshToken: "r1", expiration: .distantFuture))
        let client = client(server, interceptor: interceptor)
        #expect(try await fetchUser(client, id: 3) == User(id: 3, name: "authenticated"))
        #expect(refreshes.values == ["r1"])
        #expect(server.received.map { $0.headers["authorization"] } == ["Bearer stale", "Bearer fresh"])
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func securityPoliciesPerHost() throws {
        let client = try makePinnedClient(apiKeyHashes: ["1gb95GJXM1gXdDPo+DBTbaYUQuFpsO1ugPGyYMQAUbo="])
        let policies = client.securityPolicies
        #expect(try policies.policy(for: URL(string: "https://api.example.com/v1")!).pinningMode == .publicKey)
        #expect(try policies.policy(for: URL(string: "https://cdn.example.com/a.png")!) == .default)
        #expect(throws: CourierError.self) { try policies.policy(for: URL(string: "https://other.example.com/")!) }
    }

    @Test func redirectDeliveredAsItIs() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 302, headers: [("Location", "/new-home")], body: "")
        ])
        let client = client(server)
        #expect(try await locationOfRedirect(client, path: "old-home") == "/new-home")
        #expect(server.received.count == 1)
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func parameterEncoding() throws {
        let search = try searchRequest(SearchQuery(userName: "bang bang", tags: ["a", "b"], includeArchived: true))
        #expect(
            search.url?.absoluteString
                == "https://api.example.com/search?include_archived=true&tags=a&tags=b&user_name=bang%20bang")
        let create = try createUserRequest(User(id: 1, name: "bang"))
        #expect(create.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"id":1,"name":"bang"}"#)
        #expect(create.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func uploadDownloadAndStream() async throws {
        let server = try await ScriptedServer.start { _, received in
            switch received.path {
            case "/documents": return .init(status: 201, headers: Self.json, body: #"{"id":"doc-1"}"#)
            case "/logs/tail": return .init(status: 200, headers: [("Content-Type", "text/plain")], body: "one\ntwo\n")
            default: return .init(status: 200, headers: [("Content-Type", "text/csv")], body: "a,b\n")
            }
        }
        let client = client(server)
        let receipt = try await uploadDocument(client, pdf: Data(repeating: 1, count: 5000), fileName: "q3.pdf")
        #expect(receipt.id == "doc-1")
        #expect(server.received.first?.headers["content-type"]?.hasPrefix("multipart/form-data") == true)
        #expect((server.received.first?.bodyCount ?? 0) > 5000)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)/export.csv")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        #expect(try await downloadExport(client, to: file) == file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "a,b\n")
        #expect(try await tailLog(client) == ["one", "two"])
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func errorsMapToMessages() async throws {
        let server = try await ScriptedServer.start([.init(status: 500, headers: Self.json, body: "{}")])
        let client = client(server)
        do {
            _ = try await client.get("boom")
            Issue.record("a 500 was accepted")
        } catch {
            #expect(userMessage(for: error) == "The server answered 500.")
        }
        #expect(userMessage(for: CourierError.cancelled(context: .init())) == "Cancelled.")
        let refusing = try RefusingPort()
        do {
            _ = try await client.get("http://127.0.0.1:\(refusing.port)/")
            Issue.record("a refused connection succeeded")
        } catch {
            #expect(userMessage(for: error) == "Check your connection.")
        }
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func metricsOnEveryResponse() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, headers: Self.json, body: "{}")])
        let client = client(server)
        let first = try await describeConnection(client, path: "ping")
        #expect(first.hasSuffix(", new connection"))
        #expect(first.hasPrefix("http/1.1"))
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func articleShowsEverySampleVerbatim() throws {
        try DocumentationSamples.check(test: #filePath, article: "ComingFromAlamofire.md", expected: 14)
    }
}
