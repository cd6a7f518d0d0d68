import Courier
import CourierFixtures
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The code samples of Sources/Courier/Courier.docc/ComingFromAFNetworking.md. Each block between
// `// sample: NAME` and `// end sample` appears in the article verbatim (checked by
// `articleShowsEverySampleVerbatim`); the tests below run them against servers on 127.0.0.1, except
// `watchReachability(of:)`, `loadAvatar(_:downloader:show:)` and `pauseAndResume(_:_:to:)`, which are only
// compiled: they need a host name, an image server or a one-second pause, and the suites of those features run the
// same calls.

// sample: requests
/// AFNetworking 3/4: `[manager GET:@"repos" parameters:@{@"page": @2} headers:nil progress:nil success:… failure:…]`
func listRepositoryNames(
    _ client: HTTPSessionManager, page: Int, completion: @escaping @Sendable ([String]) -> Void
) {
    client.get(
        "repos", parameters: ["page": .int(page)],
        success: { task, object in
            let repositories = (object as? JSON)?.arrayValue ?? []
            completion(repositories.compactMap { $0["name"]?.stringValue })
        },
        failure: { task, error in
            completion([])
        })
}

struct Repository: Decodable, Sendable {
    var id: Int
    var name: String
}

/// The same call with async/await, decoded into a model.
func repositories(_ client: HTTPSessionManager, page: Int) async throws -> [Repository] {
    try await client.get("repos", parameters: ["page": .int(page)], as: [Repository].self).value
}
// end sample

// sample: content-types
/// `responseSerializer.acceptableContentTypes = [NSSet setWithObjects:@"application/json", @"text/html", nil]`
func acceptJSONServedAsHTML(_ client: HTTPSessionManager) {
    var serializer = JSONResponseSerializer()
    serializer.acceptableContentTypes?.insert("text/html")
    client.responseSerializer = serializer
}
// end sample

// sample: error-body
struct AccountError: Error {
    var status: Int?
    var message: String
}

/// The body of a failed response: AFNetworking kept it in
/// `error.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey]`.
func createAccount(_ client: HTTPSessionManager, name: String) async -> Result<Int, AccountError> {
    do {
        let response = try await client.send(
            "POST", "accounts", parameters: ["name": .string(name)], serializer: JSONResponseSerializer())
        return .success(response.value?["id"]?.intValue ?? 0)
    } catch let error as CourierError {
        let message = (error.serializedObject as? JSON)?["error"]?.stringValue ?? error.localizedDescription
        return .failure(AccountError(status: error.response?.statusCode, message: message))
    } catch {
        return .failure(AccountError(status: nil, message: "\(error)"))
    }
}
// end sample

// sample: serializers
/// `AFHTTPRequestSerializer` with `timeoutInterval`, a default header and `setQueryStringSerializationWithBlock:`
/// for servers that want `tags=a&tags=b`.
func searchRequest(query: String, tags: [String]) throws -> URLRequest {
    var serializer = HTTPRequestSerializer()
    serializer.timeoutInterval = 30
    serializer.setValue("application/json", forHTTPHeaderField: "Accept")
    serializer.arrayEncoding = .noBrackets
    let parameters: Parameter = ["q": .string(query), "tags": .array(tags.map { .string($0) })]
    return try serializer.request(method: "GET", urlString: "https://api.example.com/search", parameters: parameters)
}
// end sample

// sample: multipart
/// `POST:parameters:headers:constructingBodyWithBlock:progress:success:failure:`
func uploadAvatar(
    _ client: HTTPSessionManager, photo: URL, userID: Int, onProgress: @escaping @Sendable (Double) -> Void
) async throws -> JSON? {
    let progress: @Sendable (TaskProgress) -> Void = { onProgress($0.fractionCompleted) }
    return try await client.post("avatars", parameters: ["user": .int(userID)], progress: progress) { form in
        try form.append(fileURL: photo, name: "avatar")  // file name and MIME type from the URL
    }.value
}
// end sample

// sample: downloads
/// `downloadTaskWithRequest:progress:destination:completionHandler:`, resumed at once and awaited.
func downloadReport(_ client: HTTPSessionManager, to file: URL) async throws -> URL {
    try await client.download("reports/latest.csv", to: file).value
}

/// `cancelByProducingResumeData:` and `downloadTaskWithResumeData:…`, which work on Linux too.
func pauseAndResume(_ manager: SessionManager, _ request: URLRequest, to file: URL) async throws -> URL? {
    let task = manager.downloadTask(with: request, destination: { _, _ in file }, completionHandler: nil)
    task.resume()
    try await Task.sleep(for: .seconds(1))
    guard let resumeData = await task.cancelProducingResumeData() else { return nil }
    return try await manager.download(resumingWith: resumeData, to: file).value
}
// end sample

// sample: security
/// `[AFSecurityPolicy policyWithPinningMode:AFSSLPinningModePublicKey withPinnedCertificates:…]`
func pinnedClient(certificates directory: URL) throws -> HTTPSessionManager {
    let client = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1/"))
    let pinned = try SecurityPolicy.certificates(inDirectory: directory)  // every .cer, .der, .crt and .pem
    try client.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: pinned))
    return client
}
// end sample

// sample: hooks
/// `setTaskWillPerformHTTPRedirectionBlock:` and `setAuthenticationChallengeHandler:`, as hooks.
func installHooks(on manager: SessionManager, user: String, password: String) {
    var hooks = manager.hooks
    hooks.willPerformRedirection = { task, response, request in
        // Follow redirects on the same host only; `nil` delivers the 3xx response.
        request.url?.host == response.url?.host ? request : nil
    }
    hooks.authenticationChallenge = { task, challenge in
        challenge.previousFailureCount == 0
            ? .useCredential(Credential(user: user, password: password))
            : .cancelAuthenticationChallenge
    }
    manager.hooks = hooks
}
// end sample

// sample: notifications
/// `AFNetworkingTaskDidCompleteNotification` with `AFNetworkingTaskDidCompleteErrorKey`.
func observeFailures(_ report: @escaping @Sendable (URL?, Int) -> Void) -> any NSObjectProtocol {
    NotificationCenter.default.addObserver(forName: .taskDidComplete, object: nil, queue: nil) { notification in
        guard let error = notification.userInfo?[SessionNotificationKey.error] as? CourierError else { return }
        report(error.request?.url, error.errorCode)
    }
}
// end sample

// sample: activity
/// `[AFNetworkActivityIndicatorManager sharedManager].enabled = YES`, with
/// `setNetworkingActivityActionWithBlock:`; the monitor watches the sessions it is given to.
func clientShowingActivity(baseURL: URL, show: @escaping @Sendable (Bool) -> Void) -> HTTPSessionManager {
    let indicator = NetworkActivityMonitor()
    indicator.isEnabled = true
    indicator.setNetworkingActivityActionBlock(show)
    var configuration = SessionConfiguration.default
    configuration.eventMonitors = [indicator]
    return HTTPSessionManager(baseURL: baseURL, configuration: configuration)
}
// end sample

// sample: reachability
/// `[AFNetworkReachabilityManager managerForDomain:]`, `setReachabilityStatusChangeBlock:`, `startMonitoring`.
func watchReachability(of host: String) -> ReachabilityManager {
    let reachability = ReachabilityManager(domain: host)
    reachability.setReachabilityStatusChangeBlock { status in
        print("network: \(status)")  // "Reachable via WiFi", AFNetworking's words
    }
    reachability.startMonitoring()  // the status is known when this returns
    return reachability
}
// end sample

// sample: images
/// `AFImageDownloader`'s `downloadImageForURLRequest:success:failure:` and `cancelTaskForImageDownloadReceipt:`,
/// without UIKit: the image is its bytes, format and pixel size.
func loadAvatar(
    _ url: URL, downloader: ImageDownloader = .shared, show: @escaping @Sendable (Image) -> Void
) -> ImageDownloadReceipt? {
    var request = URLRequest(url: url)
    request.setValue("image/*", forHTTPHeaderField: "Accept")
    return downloader.downloadImage(for: request, success: { _, _, image in show(image) })
}
// end sample

// sample: operations
/// AFNetworking 2: `[manager GET:parameters:success:failure:]` on `AFHTTPRequestOperationManager`.
func loadProfileName(
    _ manager: HTTPRequestOperationManager, id: Int, completion: @escaping @Sendable (String?) -> Void
) {
    manager.get(
        "profiles/\(id)", parameters: nil,
        success: { operation, object in
            completion((object as? JSON)?["name"]?.stringValue)
        },
        failure: { operation, error in
            completion(nil)
        })
}
// end sample

/// Collects values from callbacks that run on other queues.
final class Collected<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Value] = []

    func append(_ value: Value) {
        lock.lock()
        stored.append(value)
        lock.unlock()
    }

    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

@Suite struct ComingFromAFNetworkingTests {
    private static let json = [("Content-Type", "application/json")]

    /// A client for `server` whose callbacks run on a queue of their own (nothing drains the main queue here).
    private func client(_ server: ScriptedServer) -> HTTPSessionManager {
        let client = HTTPSessionManager(baseURL: server.baseURL, configuration: .ephemeral)
        client.completionQueue = DispatchQueue(label: "ComingFromAFNetworkingTests")
        return client
    }

    @Test func requestsWithCallbacksAndAsync() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: Self.json, body: #"[{"id":1,"name":"courier"},{"id":2,"name":"bang"}]"#)
        ])
        let client = client(server)
        let names = await withCheckedContinuation { continuation in
            listRepositoryNames(client, page: 2) { continuation.resume(returning: $0) }
        }
        #expect(names == ["courier", "bang"])
        let models = try await repositories(client, page: 2)
        #expect(models.map(\.id) == [1, 2])
        #expect(server.received.map(\.path) == ["/repos", "/repos"])
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func jsonServedAsHTMLIsAcceptedOnlyWhenAsked() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("Content-Type", "text/html")], body: #"[{"id":1,"name":"courier"}]"#)
        ])
        let client = client(server)
        let refused = await withCheckedContinuation { continuation in
            listRepositoryNames(client, page: 1) { continuation.resume(returning: $0) }
        }
        #expect(refused == [])
        acceptJSONServedAsHTML(client)
        let accepted = await withCheckedContinuation { continuation in
            listRepositoryNames(client, page: 1) { continuation.resume(returning: $0) }
        }
        #expect(accepted == ["courier"])
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func errorBodyIsOnTheError() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 201, headers: Self.json, body: #"{"id":7}"#),
            .init(status: 422, headers: Self.json, body: #"{"error":"name taken"}"#),
        ])
        let client = client(server)
        client.requestSerializer = JSONRequestSerializer()
        let created = await createAccount(client, name: "bang")
        #expect((try? created.get()) == 7)
        let refused = await createAccount(client, name: "bang")
        guard case .failure(let error) = refused else {
            Issue.record("the 422 was accepted")
            return
        }
        #expect(error.status == 422)
        #expect(error.message == "name taken")
        #expect(server.received.first?.headers["content-type"] == "application/json")
        #expect(server.received.first?.method == "POST")
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func requestSerializerSettings() throws {
        let request = try searchRequest(query: "swift 6", tags: ["a", "b"])
        #expect(request.url?.absoluteString == "https://api.example.com/search?q=swift%206&tags=a&tags=b")
        #expect(request.timeoutInterval == 30)
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test func multipartUploadStreamsTheFile() async throws {
        let server = try await ScriptedServer.start([.init(status: 201, headers: Self.json, body: #"{"ok":true}"#)])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("me.png")
        try Data(repeating: 7, count: 100_000).write(to: photo)
        let fractions = Collected<Double>()
        let client = client(server)
        let reply = try await uploadAvatar(client, photo: photo, userID: 42) { fractions.append($0) }
        #expect(reply?["ok"]?.boolValue == true)
        let received = try #require(server.received.first)
        #expect(received.path == "/avatars")
        #expect(received.headers["content-type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(received.bodyCount > 100_000)
        try await waitUntil { fractions.values.last == 1 }
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func downloadGoesToTheFile() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("Content-Type", "text/csv")], body: "a,b\n1,2\n")
        ])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)/latest.csv")
        // As with AFNetworking, the move makes no folders.
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let client = client(server)
        let saved = try await downloadReport(client, to: file)
        #expect(saved == file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "a,b\n1,2\n")
        #expect(server.received.first?.path == "/reports/latest.csv")
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func pinningFromADirectoryOfCertificates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try CertificateChain.make()
        try chain.leaf.der.write(to: directory.appendingPathComponent("api.cer"))
        let client = try pinnedClient(certificates: directory)
        #expect(client.securityPolicy.pinningMode == .publicKey)
        #expect(client.securityPolicy.pinnedCertificates == [chain.leaf.der])
        // AFNetworking raised "Invalid Security Policy" for a pinning policy without an https base URL.
        let plain = HTTPSessionManager(baseURL: URL(string: "http://api.example.com/"))
        #expect(throws: SecurityPolicyError.self) {
            try plain.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [chain.leaf.der]))
        }
    }

    @Test func hooksAnswerChallengesAndStopRedirects() async throws {
        let server = try await ScriptedServer.start { index, received in
            switch received.path {
            case "/moved":
                return .init(status: 302, headers: [("Location", "http://localhost:1/elsewhere")], body: "")
            case "/private" where received.headers["authorization"] == nil:
                return .init(status: 401, headers: [("WWW-Authenticate", #"Basic realm="api""#)], body: "")
            default:
                return .init(status: 200, headers: Self.json, body: #"{"ok":true}"#)
            }
        }
        let client = client(server)
        installHooks(on: client, user: "bang", password: "secret")
        let answered = try await client.get("private").value
        #expect(answered?["ok"]?.boolValue == true)
        let authorization = server.received.last?.headers["authorization"]
        #expect(authorization == "Basic " + Data("bang:secret".utf8).base64EncodedString())
        let redirect = try await client.send(
            "GET", "moved", serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
        #expect(redirect.statusCode == 302)
        #expect(server.received.count == 3)
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func completionNotificationCarriesTheError() async throws {
        let server = try await ScriptedServer.start([.init(status: 404, headers: Self.json, body: "{}")])
        let path = "missing-\(UUID().uuidString)"
        let reports = Collected<Int>()
        let observer = observeFailures { url, code in
            if url?.lastPathComponent == path { reports.append(code) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let client = client(server)
        await #expect(throws: CourierError.self) { try await client.get(path) }
        try await waitUntil { reports.values == [-1011] }
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func activityIndicatorShowsForSlowRequests() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: Self.json, body: "{}", delay: 1.5)
        ])
        let changes = Collected<Bool>()
        let client = clientShowingActivity(baseURL: server.baseURL) { changes.append($0) }
        _ = try await client.get("slow")
        try await waitUntil { changes.values == [true, false] }
        client.invalidate(cancelingTasks: true)
        try await server.stop()
    }

    @Test func operationManagerRunsOnItsQueue() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: Self.json, body: #"{"name":"bang"}"#)
        ])
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        let name = await withCheckedContinuation { continuation in
            loadProfileName(manager, id: 7) { continuation.resume(returning: $0) }
        }
        #expect(name == "bang")
        #expect(server.received.first?.path == "/profiles/7")
        try await server.stop()
    }

    @Test func articleShowsEverySampleVerbatim() throws {
        try DocumentationSamples.check(test: #filePath, article: "ComingFromAFNetworking.md", expected: 13)
    }
}

/// Checks that the samples marked in a test file appear verbatim in a documentation article.
enum DocumentationSamples {
    static func blocks(in source: String) -> [(name: String, code: String)] {
        var blocks: [(name: String, code: String)] = []
        var current: (name: String, lines: [String])?
        for line in source.components(separatedBy: "\n") {
            if line.hasPrefix("// sample: ") {
                current = (String(line.dropFirst("// sample: ".count)), [])
            } else if line == "// end sample", let open = current {
                blocks.append((open.name, open.lines.joined(separator: "\n")))
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        return blocks
    }

    static func check(test: String, article name: String, expected: Int) throws {
        let here = URL(fileURLWithPath: test)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let articleURL = root.appendingPathComponent("Sources/Courier/Courier.docc/\(name)")
        let article = try String(contentsOf: articleURL, encoding: .utf8)
        let blocks = blocks(in: try String(contentsOf: here, encoding: .utf8))
        #expect(blocks.count == expected)
        for block in blocks {
            #expect(
                article.contains("```swift\n" + block.code + "\n```"),
                "sample \(block.name) differs from \(name)")
        }
    }
}
