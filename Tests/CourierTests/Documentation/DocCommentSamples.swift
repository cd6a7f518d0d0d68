import Courier
import CourierFixtures
import CourierImageDecoding
import CourierOpenAPI
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Every code sample of a doc comment in Sources/, compiled against the public API (`import Courier`, not
// `@testable`). Each block between `// sample: PATH` and `// end sample` is the sample of that file verbatim, its
// indentation aside (checked by `DocCommentSampleTests`); each function's parameters are what the sample takes from
// its surroundings. They are compiled, not run: the suites of their features run the same calls.

/// A terminal spinner for the activity monitor's sample.
final class DocSampleSpinner: @unchecked Sendable {
    // @unchecked: the only state is behind the lock.
    private let lock = NSLock()
    private var hidden = true
    var isHidden: Bool {
        get { lock.withLock { hidden } }
        set { lock.withLock { hidden = newValue } }
    }
}

func docSampleActivity(spinner: DocSampleSpinner, manager: SessionManager) {
    // sample: Sources/Courier/Activity/NetworkActivityMonitor.swift
    let activity = NetworkActivityMonitor.shared
    activity.isEnabled = true
    activity.setNetworkingActivityActionBlock { visible in spinner.isHidden = !visible }
    activity.observe(manager)
    // end sample
}

func docSampleImageDownloader(
    avatarURL: URL, request: URLRequest, show: @escaping @Sendable (Image) -> Void
) async throws {
    // sample: Sources/Courier/Images/Downloading/ImageDownloader.swift
    let downloader = ImageDownloader.shared
    let image = try await downloader.image(for: URLRequest(url: avatarURL))
    show(image)

    let receipt = downloader.downloadImage(for: request, success: { _, _, image in show(image) })
    if let receipt { downloader.cancelTask(for: receipt) }  // that caller gives up; others keep their share
    // end sample
}

func docSampleParameter() -> Parameter {
    // sample: Sources/Courier/Parameters/Parameter.swift
    let parameters: Parameter = ["name": "bang", "phone": ["mobile": "xx"], "tags": ["a", "b"], "n": 1]
    // end sample
    return parameters
}

func docSampleParameterEncoder() throws -> Parameter {
    // sample: Sources/Courier/Parameters/ParameterEncoder.swift
    struct Search: Encodable {
        var query: String
        var page: Int
        var tags: [String]
    }
    let parameters = try Parameter(encoding: Search(query: "swift", page: 2, tags: ["a", "b"]))
    // ["query": "swift", "page": 2, "tags": ["a", "b"]]
    // end sample
    return parameters
}

func docSampleReachability() {
    // sample: Sources/Courier/Reachability/ReachabilityManager.swift
    let reachability = ReachabilityManager.shared
    reachability.setReachabilityStatusChangeBlock { status in print(status) }
    reachability.startMonitoring()
    print(reachability.status)  // already known: the current state is read before startMonitoring() returns
    // end sample
}

func docSampleSecurityPolicies(pinned: SecurityPolicy, manager: SessionManager) throws {
    // sample: Sources/Courier/Security/SecurityPolicies.swift
    var policies = SecurityPolicies(default: .default)
    policies.hostPolicies["api.example.com"] = pinned
    policies.allHostsMustBeEvaluated = true  // any other https host fails with -1202
    try manager.setSecurityPolicies(policies)
    // end sample
}

func docSampleSecurityPolicy(manager: SessionManager) throws {
    // sample: Sources/Courier/Security/SecurityPolicy.swift
    let pinned = try SecurityPolicy.certificates(inDirectory: URL(fileURLWithPath: "certs"))
    let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: pinned)
    try manager.setSecurityPolicy(policy)
    // end sample
}

func docSampleMultipartFormData(photoURL: URL) throws -> HTTPRequestBody {
    // sample: Sources/Courier/Serialization/Request/MultipartFormData.swift
    var form = MultipartFormData()
    form.append(Data("Bang".utf8), name: "name")
    try form.append(fileURL: photoURL, name: "photo")  // image/png, file name from the URL
    let body = form.makeBody()  // length known, nothing read yet
    // end sample
    return body
}

func docSampleMultipartRequest(
    photo: URL, manager: SessionManager, handle: @escaping @Sendable (Any?, (any Error)?) -> Void
) throws {
    // sample: Sources/Courier/Serialization/Request/RequestSerializer+Multipart.swift
    let multipart = try HTTPRequestSerializer().multipartRequest(
        method: "POST", urlString: "https://example.com/upload", parameters: ["album": "summer"]
    ) { form in
        try form.append(fileURL: photo, name: "photo")
    }
    manager.uploadTask(with: multipart) { response, object, error in handle(object, error) }.resume()
    // end sample
}

func docSampleEventSource(manager: SessionManager, url: URL) async throws {
    // sample: Sources/Courier/ServerSentEvents/EventSource.swift
    for try await event in manager.eventStream(URLRequest(url: url)) {
        print(event.event, event.data)
    }
    // end sample
}

func docSampleHTTPSessionManager() async throws -> User {
    // sample: Sources/Courier/Session/HTTPSessionManager.swift
    let client = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
    let user = try await client.get("users/1", as: User.self).value
    // end sample
    return user
}

// OAuthCredential, OAuthAuthenticator, BearerToken and User are the Coming from Alamofire article's.
func docSampleAuthenticationInterceptor(
    stored: OAuthCredential, tokenEndpoint: @escaping @Sendable (String) async throws -> OAuthCredential,
    configuration: inout SessionConfiguration
) {
    // sample: Sources/Courier/Session/Features/AuthenticationInterceptor.swift
    let interceptor = AuthenticationInterceptor(
        authenticator: OAuthAuthenticator(refreshTokens: tokenEndpoint), credential: stored)
    configuration.interceptor = Interceptor(interceptors: [interceptor, RetryPolicy()])
    // end sample
}

func docSampleInterceptor(token: String, configuration: inout SessionConfiguration) {
    // sample: Sources/Courier/Session/Interceptors/Interceptor.swift
    configuration.interceptor = Interceptor(adapters: [BearerToken(token: token)], retriers: [RetryPolicy()])
    // end sample
}

func docSampleOfflineRetrier() -> SessionConfiguration {
    // sample: Sources/Courier/Session/Features/OfflineRetrier.swift
    var configuration = SessionConfiguration.default
    configuration.interceptor = OfflineRetrier(maximumWait: .seconds(10))
    // end sample
    return configuration
}

func docSampleRetryPolicy() -> SessionConfiguration {
    // sample: Sources/Courier/Session/Features/RetryPolicy.swift
    var configuration = SessionConfiguration.default
    configuration.interceptor = RetryPolicy()  // 2 retries, after 0.5 s and 1 s
    // end sample
    return configuration
}

func docSampleSessionManager(request: URLRequest, handle: @escaping @Sendable (Any?, (any Error)?) -> Void) {
    // sample: Sources/Courier/Session/SessionManager.swift
    let manager = SessionManager()
    let task = manager.dataTask(with: request) { response, object, error in handle(object, error) }
    task.resume()
    // end sample
}

func docSampleWebSocketTask(manager: SessionManager) async throws {
    // sample: Sources/Courier/WebSockets/WebSocketTask.swift
    let socket = manager.webSocketTask(with: URLRequest(url: URL(string: "wss://example.org/chat")!))
    try await socket.send(.string("hello"))
    for try await message in socket.messages { print(message) }
    // end sample
}

func docSampleCertificateAuthority() throws -> IssuedCertificate {
    // sample: Sources/CourierFixtures/CertificateAuthority.swift
    let root = try CertificateAuthority.root(commonName: "Courier Test Root")
    let intermediate = try root.intermediate(commonName: "Courier Test Intermediate")
    let leaf = try intermediate.leaf(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
    // nginx: ssl_certificate = leaf.pem + intermediate.certificate.pem; ssl_certificate_key = leaf.privateKeyPEM
    // end sample
    return leaf
}

func docSampleCertificateChain(directory: URL) throws -> CertificateChain.Files {
    // sample: Sources/CourierFixtures/CertificateChain.swift
    let chain = try CertificateChain.make()
    let files = try chain.write(to: directory)
    // nginx: ssl_certificate files.fullChain; ssl_certificate_key files.leafKey;
    // client: trust chain.root.der, or pin chain.leaf.der / chain.intermediate.der / chain.root.der
    // end sample
    return files
}

func docSampleSystemImageDecoder(request: URLRequest) async throws {
    // sample: Sources/CourierImageDecoding/SystemImageDecoder.swift
    let downloader = ImageDownloader(decoder: SystemImageDecoder())
    let image = try await downloader.image(for: request)
    print(image.bitmap?[0, 0] ?? [])  // [r, g, b, a]; nil for a format the platform cannot decode
    // end sample
}

func docSampleCourierClientTransport(configuration: SessionConfiguration) async throws -> String? {
    // sample: Sources/CourierOpenAPI/CourierClientTransport.swift
    let session = SessionManager(configuration: configuration)  // interceptors, retry, monitors, pinning…
    let client = Client(serverURL: try Servers.Server1.url(), transport: CourierClientTransport(session: session))
    let echo = try await client.getEcho(query: .init(name: "courier")).ok.body.json
    // end sample
    return echo.args.additionalProperties["name"]
}

func docSampleStubMatchers() -> [StubMatcher] {
    // sample: Sources/CourierTesting/Stubs/StubMatcher.swift
    let user = StubMatcher.get("https://api.example.com/users/1")  // this URL; with a query, that query too
    let users = StubMatcher.get("https://api.example.com/users/*")  // a prefix: anything under it
    let avatar = StubMatcher.post("/users/:id/avatar")  // a path pattern, any host
        .header("Content-Type", "image/png")
    let rename = StubMatcher.put("/users/1").body(json: #"{"name":"Ada"}"#)
    // end sample
    return [user, users, avatar, rename]
}

func docSampleStubResponses() -> [StubResponse] {
    // sample: Sources/CourierTesting/Stubs/StubResponse.swift
    let found = StubResponse.json(#"{"id":1}"#)
    let missing = StubResponse.status(404)
    let moved = StubResponse.redirect(to: "/login")  // the session's redirect policy runs
    let streamed = StubResponse.chunks(["a", "b", "c"].map { Data($0.utf8) }, every: .milliseconds(50))
    let timeout = StubResponse.failure(.timedOut)
    let cut = StubResponse.text("partial").losingConnection(afterBytes: 3)
    let slow = StubResponse.json("[]").delayed(by: .milliseconds(200))
    // end sample
    return [found, missing, moved, streamed, timeout, cut, slow]
}

func docSampleStubTransport() async throws -> [String] {
    struct User: Decodable, Sendable {
        var id: Int
        var name: String
    }
    // sample: Sources/CourierTesting/Stubs/StubTransport.swift
    let stubs = StubTransport()
    stubs.stub(.get("https://api.example.com/users/1"), with: .json(#"{"id":1,"name":"Ada"}"#))
    stubs.stub(.post("/users"), with: [.status(503), .status(201)])  // fails once, then succeeds
    let manager = HTTPSessionManager(
        baseURL: URL(string: "https://api.example.com/"), configuration: .ephemeral, transport: stubs)
    let user = try await manager.get("users/1", as: User.self).value
    // After the code under test has run: what did it send?
    let methods = stubs.requests.map(\.method)
    // end sample
    return methods + [user.name]
}

func docSampleRecordingTransport(api: URL) async throws {
    // sample: Sources/CourierTesting/HAR/RecordingTransport.swift
    let recorder = RecordingTransport(wrapping: NIOTransport(), file: URL(fileURLWithPath: "session.har"))
    let manager = HTTPSessionManager(baseURL: api, configuration: .ephemeral, transport: recorder)
    _ = try await manager.send("GET", "status", serializer: HTTPResponseSerializer())  // in the file once read
    await recorder.shutdown()
    // end sample
}

func docSampleReplayTransport(api: URL) async throws {
    // sample: Sources/CourierTesting/HAR/ReplayTransport.swift
    let replay = try ReplayTransport(contentsOf: URL(fileURLWithPath: "session.har"), strict: true)
    let manager = HTTPSessionManager(baseURL: api, configuration: .ephemeral, transport: replay)
    _ = try await manager.send("GET", "status", serializer: HTTPResponseSerializer())
    try replay.verifyAllPlayed()
    // end sample
}

func docSampleFaultInjectingTransport() -> FaultInjectingTransport {
    // sample: Sources/CourierTesting/Faults/FaultInjectingTransport.swift
    let faulty = FaultInjectingTransport(
        wrapping: NIOTransport(),
        faults: [
            .failFirst(2, with: .connectionLost),  // the first two attempts fail
            .dropConnection(afterBytes: 64 * 1024, matching: .get("/big")),  // then a download is cut once
        ])
    // end sample
    return faulty
}

// sample: Sources/Courier/Session/URLRequestConvertible.swift
enum GitHub: URLRequestConvertible {
    case repository(owner: String, name: String)
    case search(query: String)

    func asURLRequest() throws -> URLRequest {
        let base = URL(string: "https://api.github.com/")!
        switch self {
        case .repository(let owner, let name):
            return URLRequest(url: base.appendingPathComponent("repos/\(owner)/\(name)"))
        case .search(let query):
            let url = base.appendingPathComponent("search/repositories")
            return try HTTPRequestSerializer().request(method: "GET", url: url, parameters: ["q": .string(query)])
        }
    }
}
// end sample

func docSampleClosureEventMonitor() -> SessionConfiguration {
    // sample: Sources/Courier/Session/Events/ClosureEventMonitor.swift
    let monitor = ClosureEventMonitor(
        taskDidComplete: { task, metrics, error in
            print(task.originalRequest?.url?.absoluteString ?? "?", metrics.taskInterval.duration, error as Any)
        })
    var configuration = SessionConfiguration.default
    configuration.eventMonitors = [monitor]
    // end sample
    return configuration
}

func docSampleTaskHooks(manager: HTTPSessionManager, request: URLRequest) async throws -> DataResponse<Data?> {
    // sample: Sources/Courier/Session/Configuration/TaskHooks.swift
    var once = TaskHooks()
    once.willPerformRedirection = { _, _, _ in nil }  // this request follows no redirect
    once.credential = Credential(user: "ada", password: "secret")
    let response = try await manager.send(request, serializer: HTTPResponseSerializer(), hooks: once)
    // end sample
    return response
}

func foundationJSONSample(_ manager: HTTPSessionManager) {
    // sample: Sources/Courier/Serialization/Response/FoundationJSONResponseSerializer.swift
    manager.responseSerializer = FoundationJSONResponseSerializer(readingOptions: .fragmentsAllowed)
    // end sample
}
