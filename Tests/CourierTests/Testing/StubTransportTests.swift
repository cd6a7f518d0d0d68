import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``StubTransport`` under a real session: what each rule matches, what each response does, and that the session's
/// features (redirects, retries, timeouts, downloads, uploads, server-sent events, WebSockets) run over it.
@Suite(.timeLimit(.minutes(1)))
struct StubTransportTests {
    static let base = URL(string: "https://api.example.test/v1/")!

    private func manager(_ stubs: StubTransport, configure: (inout SessionConfiguration) -> Void = { _ in })
        -> HTTPSessionManager
    {
        var configuration = SessionConfiguration.ephemeral
        configure(&configuration)
        return HTTPSessionManager(baseURL: Self.base, configuration: configuration, transport: stubs)
    }

    private func text(_ response: DataResponse<Data?>) -> String {
        String(decoding: response.value ?? Data(), as: UTF8.self)
    }

    @Test("A JSON GET is answered and recorded with the headers the session sent")
    func jsonGet() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("https://api.example.test/v1/users/1"), with: .json(#"{"id":1,"name":"Ada"}"#))
        let manager = manager(stubs)
        struct User: Decodable, Sendable { var id: Int, name: String }
        let user = try await manager.get("users/1", as: User.self).value
        #expect(user.name == "Ada")
        #expect(stubs.requests.count == 1)
        let seen = try #require(stubs.requests.first)
        #expect(seen.method == "GET" && seen.url.absoluteString == "https://api.example.test/v1/users/1")
        #expect(seen.headers["User-Agent"]?.hasPrefix("Courier") == true, "\(seen.headers.dictionary)")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Rules match on path patterns, query items, header fields and JSON bodies; the first that matches wins")
    func matching() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/users/:id").query("expand", "posts"), with: .text("expanded"))
        stubs.stub(.get("/v1/users/*"), with: .text("plain"))
        stubs.stub(.post("/v1/users").body(json: #"{"name":"Ada","admin":false}"#), with: .text("ada"))
        stubs.stub(.post("/v1/users").header("X-Trace", "1"), with: .text("traced"))
        stubs.stub(.url("https://api.example.test/v1/files/*"), with: .text("any method"))
        let manager = manager(stubs)
        let serializer = HTTPResponseSerializer()
        #expect(text(try await manager.send("GET", "users/7?expand=posts", serializer: serializer)) == "expanded")
        #expect(text(try await manager.send("GET", "users/7", serializer: serializer)) == "plain")
        var post = URLRequest(url: Self.base.appendingPathComponent("users"))
        post.httpMethod = "POST"
        post.httpBody = Data(#"{"admin":false,"name":"Ada"}"#.utf8)  // keys in another order
        #expect(text(try await manager.send(post, serializer: serializer)) == "ada")
        post.httpBody = Data(#"{"name":"Bob"}"#.utf8)
        post.setValue("1", forHTTPHeaderField: "X-Trace")
        #expect(text(try await manager.send(post, serializer: serializer)) == "traced")
        #expect(text(try await manager.send("DELETE", "files/a/b", serializer: serializer)) == "any method")
        #expect(stubs.requests.map(\.method) == ["GET", "GET", "POST", "POST", "DELETE"])
        struct NewUser: Decodable { var name: String, admin: Bool }
        #expect(try stubs.requests[2].decodedBody(as: NewUser.self).admin == false)
        manager.invalidate(cancelingTasks: true)
    }

    @Test("An unmatched request fails with a CourierError naming the closest rules and how they differ")
    func unmatched() async throws {
        let stubs = StubTransport()
        stubs.stub(.post("https://api.example.test/v1/users"), with: .status(201))
        stubs.stub(.get("https://other.example.test/"), with: .status(200))
        let manager = manager(stubs)
        let error = await thrownCourierError {
            _ = try await manager.send("GET", "users", serializer: HTTPResponseSerializer())
        }
        #expect(error?.errorCode == -1)
        let words = String(describing: error?.underlyingError ?? StubError(""))
        #expect(words.contains("no stubbed rule matches GET https://api.example.test/v1/users"), "\(words)")
        #expect(words.contains("POST https://api.example.test/v1/users (differs in method)"), "\(words)")
        #expect(stubs.requests.count == 1, "an unmatched request is recorded too")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Responses in turn: a 503, then a 200, under the session's retry policy")
    func sequenceAndRetry() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/flaky"), with: [.status(503), .text("ok")])
        let manager = manager(stubs) { configuration in
            var policy = RetryPolicy()
            policy.exponentialBackoffScale = 0.01
            configuration.interceptor = policy
        }
        #expect(text(try await manager.send("GET", "flaky", serializer: HTTPResponseSerializer())) == "ok")
        #expect(stubs.requests.count == 2)
        // The last response answers again once they are used up.
        #expect(text(try await manager.send("GET", "flaky", serializer: HTTPResponseSerializer())) == "ok")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A redirect runs the session's redirect policy: followed to the stub of its target")
    func redirect() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/old"), with: .redirect(to: "/v1/new", status: 301))
        stubs.stub(.get("/v1/new"), with: .text("moved here"))
        let manager = manager(stubs)
        let response = try await manager.send("GET", "old", serializer: HTTPResponseSerializer())
        #expect(text(response) == "moved here")
        #expect(response.response.url?.path == "/v1/new")
        #expect(stubs.requests.map(\.url.path) == ["/v1/old", "/v1/new"])
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Failures: a timeout, a refused connection, a connection lost mid-body, no answer at all")
    func failures() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/timeout"), with: .failure(.timedOut))
        stubs.stub(.get("/v1/refused"), with: .failure(.cannotConnect))
        stubs.stub(.get("/v1/cut"), with: .text("0123456789").losingConnection(afterBytes: 4))
        stubs.stub(.get("/v1/silent"), with: .failure(.noAnswer))
        let manager = manager(stubs)
        // Only the silent stub waits for the timeout; a short one for every request would also fire when a loaded
        // machine is slow to deliver a stub's instant failure.
        let impatient = self.manager(stubs) { $0.timeoutIntervalForRequest = 0.3 }
        let serializer = HTTPResponseSerializer()
        #expect(
            await thrownCourierError { _ = try await manager.send("GET", "timeout", serializer: serializer) }?.errorCode
                == -1001)
        #expect(
            await thrownCourierError { _ = try await manager.send("GET", "refused", serializer: serializer) }?.errorCode
                == -1004)
        #expect(
            await thrownCourierError { _ = try await manager.send("GET", "cut", serializer: serializer) }?.errorCode
                == -1005)
        let started = ContinuousClock.now
        #expect(
            await thrownCourierError { _ = try await impatient.send("GET", "silent", serializer: serializer) }?
                .errorCode
                == -1001)
        #expect(ContinuousClock.now - started < .seconds(10))
        manager.invalidate(cancelingTasks: true)
        impatient.invalidate(cancelingTasks: true)
    }

    @Test("Latency delays the head")
    func latency() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/slow"), with: StubResponse.text("late").delayed(by: .milliseconds(300)))
        let manager = manager(stubs)
        let started = ContinuousClock.now
        #expect(text(try await manager.send("GET", "slow", serializer: HTTPResponseSerializer())) == "late")
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A download of chunks with delays goes to its file, with progress")
    func download() async throws {
        let stubs = StubTransport()
        let chunks = (0..<5).map { Data(repeating: UInt8($0), count: 1000) }
        stubs.stub(.get("/v1/file"), with: .chunks(chunks, every: .milliseconds(20)))
        let manager = manager(stubs)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let updates = Locked<[Int64]>([])
        let response = try await manager.download(
            URLRequest(url: Self.base.appendingPathComponent("file")), to: destination,
            progress: { progress in updates.withLock { $0.append(progress.completed) } })
        #expect(response.value == destination)
        #expect(try Data(contentsOf: destination) == chunks.reduce(Data(), +))
        #expect(updates.value.last == 5000)
        #expect(updates.value.count >= 2, "progress as the chunks came: \(updates.value)")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A multipart upload reaches the stub whole; a file body is read when sent")
    func multipartAndFile() async throws {
        let stubs = StubTransport()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID()).txt")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        stubs.stub(
            .post("/v1/upload").body(matching: { String(decoding: $0, as: UTF8.self).contains("name=\"avatar\"") })
        ) {
            request in .json(#"{"received":\#(request.body.count)}"#)
        }
        stubs.stub(.get("/v1/doc"), with: .file(file, contentType: "text/plain"))
        let manager = manager(stubs)
        let response = try await manager.post("upload", serializer: HTTPResponseSerializer()) { form in
            form.append(Data([0xFF, 0x00, 0x01]), name: "avatar", fileName: "a.png", mimeType: "image/png")
            form.append(Data("Ada".utf8), name: "name")
        }
        let sent = try #require(stubs.requests.last?.body)
        #expect(text(response) == #"{"received":\#(sent.count)}"#)
        #expect(sent.range(of: Data([0xFF, 0x00, 0x01])) != nil)
        #expect(text(try await manager.send("GET", "doc", serializer: HTTPResponseSerializer())) == "from a file")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Server-sent events from a scripted stream")
    func serverSentEvents() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/events"), with: .events(["event: tick\ndata: 1", "data: 2", "id: 3\ndata: three"]))
        let manager = manager(stubs)
        var got: [String] = []
        for try await event in manager.eventStream(URLRequest(url: Self.base.appendingPathComponent("events"))) {
            got.append(event.data)
            if got.count == 3 { break }
        }
        #expect(got == ["1", "2", "three"])
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A WebSocket with a scripted peer: a greeting, echoes, and a close after two messages")
    func webSocket() async throws {
        let stubs = StubTransport()
        stubs.stubWebSocket(
            .url("/v1/socket"),
            script: StubWebSocket.Script(greeting: [.string("welcome")], closesAfter: 2) { message in
                [message, .string("ack")]
            })
        let manager = manager(stubs)
        let socket = manager.webSocketTask(with: URLRequest(url: URL(string: "wss://api.example.test/v1/socket")!))
        #expect(try await socket.receive() == .string("welcome"))
        try await socket.send(.string("one"))
        #expect(try await socket.receive() == .string("one"))
        #expect(try await socket.receive() == .string("ack"))
        try await socket.send(.data(Data([1, 2])))
        #expect(try await socket.receive() == .data(Data([1, 2])))
        #expect(try await socket.receive() == .string("ack"))
        await #expect(throws: (any Error).self) { _ = try await socket.receive() }
        manager.invalidate(cancelingTasks: true)
    }

    @Test("json(encoding:) answers with the value encoded by the given encoder, its status and application/json")
    func jsonEncodingResponse() async throws {
        struct Account: Codable, Sendable { var accountNumber: Int, displayName: String }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let stubs = StubTransport()
        try stubs.stub(
            .post("/v1/accounts"),
            with: .json(
                encoding: Account(accountNumber: 7, displayName: "Ada"), status: 201, headers: ["X-Request-Id": "r1"],
                encoder: encoder))
        let manager = manager(stubs)
        let response = try await manager.send("POST", "accounts", serializer: HTTPResponseSerializer())
        #expect(response.statusCode == 201)
        #expect(response.response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.response.value(forHTTPHeaderField: "X-Request-Id") == "r1")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let account = try decoder.decode(Account.self, from: response.value ?? Data())
        #expect(account.accountNumber == 7 && account.displayName == "Ada")
        #expect(text(response).contains("\"display_name\""), "the encoder given was used: \(text(response))")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Body matchers: exact bytes, UTF-8 text, and JSON equal to an Encodable value (keys in any order)")
    func bodyMatchers() async throws {
        struct Rename: Encodable { var name: String, notify: Bool }
        let stubs = StubTransport()
        stubs.stub(.put("/v1/blob").body(Data([0x00, 0xFF, 0x10])), with: .text("bytes"))
        stubs.stub(.post("/v1/notes").body(text: "héllo"), with: .text("text"))
        try stubs.stub(.patch("/v1/users/1").body(json: Rename(name: "Ada", notify: true)), with: .text("json"))
        let manager = manager(stubs)
        func send(_ method: String, _ path: String, _ body: Data) async throws -> String {
            var request = URLRequest(url: Self.base.appendingPathComponent(path))
            request.httpMethod = method
            request.httpBody = body
            return text(try await manager.send(request, serializer: HTTPResponseSerializer()))
        }
        #expect(try await send("PUT", "blob", Data([0x00, 0xFF, 0x10])) == "bytes")
        #expect(try await send("POST", "notes", Data("héllo".utf8)) == "text")
        #expect(try await send("PATCH", "users/1", Data(#"{"notify":true,"name":"Ada"}"#.utf8)) == "json")
        // One byte more, other text, another JSON value: each rule says it was the body that differed.
        for (method, path, body) in [
            ("PUT", "blob", Data([0x00, 0xFF, 0x10, 0x00])), ("POST", "notes", Data("hello".utf8)),
            ("PATCH", "users/1", Data(#"{"notify":false,"name":"Ada"}"#.utf8)),
        ] {
            let error = await thrownCourierError { _ = try await send(method, path, body) }
            let words = String(describing: error?.underlyingError ?? StubError(""))
            #expect(words.contains("(differs in body)"), "\(words)")
        }
        manager.invalidate(cancelingTasks: true)
    }

    @Test("The session's redirect hook decides over a stub: refusing delivers the 3xx, changing sends elsewhere")
    func redirectHook() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/old"), with: .redirect(to: "/v1/new", status: 301))
        stubs.stub(.get("/v1/new"), with: .text("the target"))
        stubs.stub(.get("/v1/mirror"), with: .text("the mirror"))
        let manager = manager(stubs)
        let anyStatus = HTTPResponseSerializer(acceptableStatusCodes: nil)
        manager.hooks.willPerformRedirection = { _, _, _ in nil }
        let refused = try await manager.send("GET", "old", serializer: anyStatus)
        #expect(refused.statusCode == 301)
        #expect(refused.response.value(forHTTPHeaderField: "Location") == "/v1/new")
        #expect(stubs.requests.map(\.url.path) == ["/v1/old"], "the target was never asked")

        stubs.reset()
        stubs.stub(.get("/v1/old"), with: .redirect(to: "/v1/new", status: 301))
        stubs.stub(.get("/v1/new"), with: .text("the target"))
        stubs.stub(.get("/v1/mirror").header("X-Redirected", "yes"), with: .text("the mirror"))
        manager.hooks.willPerformRedirection = { _, response, next in
            var changed = next
            changed.url = URL(string: "/v1/mirror", relativeTo: response.url)?.absoluteURL
            changed.setValue("yes", forHTTPHeaderField: "X-Redirected")
            return changed
        }
        let changed = try await manager.send("GET", "old", serializer: anyStatus)
        #expect(text(changed) == "the mirror")
        #expect(stubs.requests.map(\.url.path) == ["/v1/old", "/v1/mirror"])
        #expect(stubs.requests.last?.headers["X-Redirected"] == "yes")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A request adapter's header reaches the stub: the rule can match on it, the recorded request shows it")
    func adapterHeader() async throws {
        struct Signer: RequestAdapter {
            func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
                var signed = request
                signed.setValue("sig-\(request.url?.path ?? "")", forHTTPHeaderField: "X-Signature")
                return signed
            }
        }
        let stubs = StubTransport()
        stubs.stub(.get("/v1/old"), with: .redirect(to: "/v1/new"))
        stubs.stub(.get("/v1/new").header("X-Signature", "sig-/v1/new"), with: .text("signed"))
        let manager = manager(stubs) { $0.interceptor = Interceptor(adapters: [Signer()]) }
        #expect(text(try await manager.send("GET", "old", serializer: HTTPResponseSerializer())) == "signed")
        // The adapter ran again for the redirect's request, as it does before each one sent.
        #expect(stubs.requests.map { $0.headers["X-Signature"] } == ["sig-/v1/old", "sig-/v1/new"])
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A plain upload from Data and from a file: the stub gets the bytes, and upload progress reaches the total")
    func plainUploads() async throws {
        let payload = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stub-upload-\(UUID()).bin")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let stubs = StubTransport()
        stubs.stub(.put("/v1/blob")) { request in .text("\(request.body.count)") }
        let manager = manager(stubs)
        var request = URLRequest(url: Self.base.appendingPathComponent("blob"))
        request.httpMethod = "PUT"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        for (label, body) in [("data", HTTPRequestBody.data(payload)), ("file", try HTTPRequestBody.file(file))] {
            let progress = Locked([TaskProgress]())
            let response = try await manager.upload(
                request, body: body, progress: { value in progress.withLock { $0.append(value) } },
                serializer: HTTPResponseSerializer())
            #expect(text(response) == "70000", "\(label)")
            let seen = try #require(stubs.requests.last)
            #expect(seen.method == "PUT" && seen.body == payload, "\(label)")
            #expect(seen.headers["Content-Type"] == "application/octet-stream", "\(label)")
            let last = try #require(progress.value.last, "\(label): no upload progress")
            #expect(last.completed == 70_000 && last.total == 70_000, "\(label): \(progress.value)")
            #expect(last.fractionCompleted == 1.0, "\(label)")
        }
        manager.invalidate(cancelingTasks: true)
    }

    @Test("An unmatched WebSocket request fails naming the closest WebSocket rules and how they differ")
    func unmatchedWebSocket() async throws {
        let stubs = StubTransport()
        stubs.stubWebSocket(.url("/v1/chat").header("X-Room", "blue"), script: .echo)
        stubs.stubWebSocket(.url("wss://other.example.test/feed"), script: .echo)
        // An HTTP rule for the same URL answers no WebSocket.
        stubs.stub(.get("/v1/chat"), with: .text("not a socket"))
        let manager = manager(stubs)
        var request = URLRequest(url: URL(string: "wss://api.example.test/v1/chat")!)
        request.setValue("red", forHTTPHeaderField: "X-Room")
        let socket = manager.webSocketTask(with: request)
        let error = await thrownCourierError { _ = try await socket.receive() }
        #expect(error?.errorCode == -1)
        let words = String(describing: error?.underlyingError ?? StubError(""))
        #expect(words.contains("no stubbed WebSocket rule matches"), "\(words)")
        #expect(words.contains("wss://api.example.test/v1/chat"), "\(words)")
        #expect(words.contains("path /v1/chat [X-Room: blue] (differs in headers)"), "\(words)")
        #expect(words.contains("wss://other.example.test/feed (differs in URL)"), "\(words)")
        #expect(stubs.requests.last?.url.path == "/v1/chat", "an unmatched WebSocket request is recorded too")
        manager.invalidate(cancelingTasks: true)
    }
}
