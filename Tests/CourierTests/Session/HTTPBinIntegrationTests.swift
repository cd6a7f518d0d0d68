import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session stack end to end against a real httpbin, on every transport.
@Suite(.timeLimit(.minutes(3)))
struct HTTPBinIntegrationTests {
    static let transports = TestTransports.names

    func client(_ transport: String, configuration: SessionConfiguration = .ephemeral) async throws
        -> HTTPSessionManager
    {
        let base = try await HTTPBin.shared.url()
        let manager = HTTPSessionManager(
            baseURL: base, configuration: configuration, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    struct Echo: Decodable, Sendable {
        var args: [String: String]?
        var form: [String: String]?
        var json: JSON?
        var headers: [String: String]
        var url: String
    }

    @Test(arguments: transports)
    func getSendsQueryAndDefaultHeaders(transport: String) async throws {
        let client = try await client(transport)
        let response = try await client.get("get", parameters: ["q": "a b", "n": 1], as: Echo.self)
        #expect(response.statusCode == 200)
        #expect(response.value.args == ["q": "a b", "n": "1"])
        #expect(response.value.headers["User-Agent"] == DefaultHeaders.userAgent)
        #expect(response.value.headers["Accept-Language"] != nil)
        #expect(response.request.url?.query == "n=1&q=a%20b")
    }

    @Test(arguments: transports)
    func formBodiesForPostPutPatch(transport: String) async throws {
        let client = try await client(transport)
        for method in ["POST", "PUT", "PATCH"] {
            let response = try await client.send(
                method, method.lowercased(), parameters: ["name": "bang", "tags": ["a"]], as: Echo.self)
            #expect(response.value.form == ["name": "bang", "tags[]": "a"], "\(method)")
            #expect(response.value.headers["Content-Type"] == "application/x-www-form-urlencoded")
        }
    }

    @Test(arguments: transports)
    func jsonBodies(transport: String) async throws {
        let client = try await client(transport)
        client.requestSerializer = JSONRequestSerializer()
        let response = try await client.post("post", parameters: ["name": "bang", "n": 2, "ok": true], as: Echo.self)
        #expect(response.value.json == ["name": "bang", "n": 2, "ok": true])
    }

    @Test(arguments: transports)
    func deleteUsesTheQueryAndHeadHasNoBody(transport: String) async throws {
        let client = try await client(transport)
        let deleted = try await client.delete("delete", parameters: ["id": 7], as: Echo.self)
        #expect(deleted.value.args == ["id": "7"])
        let head = try await client.head("get")
        #expect(head.statusCode == 200)
        #expect(head.data.isEmpty)
    }

    @Test(arguments: transports)
    func perRequestHeadersReplaceSerializerDefaults(transport: String) async throws {
        let client = try await client(transport)
        let response = try await client.get("headers", headers: ["User-Agent": "mine/1", "X-Extra": "x"])
        #expect(response.value?["headers"]?["User-Agent"] == "mine/1")
        #expect(response.value?["headers"]?["X-Extra"] == "x")
    }

    @Test(arguments: transports)
    func badStatusKeepsTheBodyReadable(transport: String) async throws {
        let client = try await client(transport)
        do {
            _ = try await client.get("status/418")
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.errorCode == -1011)
            #expect(error.response?.statusCode == 418)
            #expect(String(decoding: error.responseData ?? Data(), as: UTF8.self).contains("teapot"))
            #expect(error.request?.url?.path == "/status/418")
            #expect(error.localizedDescription == "Request failed: client error (418)")
        }
        let ok = try await client.send("GET", "status/201", serializer: HTTPResponseSerializer())
        #expect(ok.statusCode == 201)
    }

    @Test(arguments: transports)
    func noContentGivesNil(transport: String) async throws {
        let client = try await client(transport)
        let response = try await client.get("status/204")
        #expect(response.statusCode == 204)
        #expect(response.value == nil)
    }

    @Test(arguments: transports)
    func redirectsAreFollowed(transport: String) async throws {
        let client = try await client(transport)
        let response = try await client.get("redirect/3", as: Echo.self)
        #expect(response.statusCode == 200)
        #expect(response.request.url?.path == "/get")
        let absolute = try await client.get("absolute-redirect/2", as: Echo.self)
        #expect(absolute.request.url?.path == "/get")
    }

    @Test(arguments: transports)
    func redirectHookCanChangeAndStopAHop(transport: String) async throws {
        let client = try await client(transport)
        let hops = Locked([Int]())
        var hooks = SessionHooks()
        hooks.willPerformRedirection = { _, response, proposed in
            hops.withLock { $0.append(response.statusCode) }
            guard proposed.url?.path != "/get" else { return nil }
            var changed = proposed
            changed.setValue("yes", forHTTPHeaderField: "X-Redirected")
            return changed
        }
        client.hooks = hooks
        let stopped = try await client.send(
            "GET", "redirect/2", serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
        #expect(stopped.statusCode == 302)
        #expect(hops.value == [302, 302])

        var redirectTo = SessionHooks()
        redirectTo.willPerformRedirection = { _, _, proposed in
            var changed = proposed
            changed.url = proposed.url.flatMap { URL(string: "anything?changed=1", relativeTo: $0)?.absoluteURL }
            return changed
        }
        client.hooks = redirectTo
        let changed = try await client.get(
            "redirect-to", parameters: ["url": "/get", "status_code": 307], as: Echo.self)
        #expect(changed.value.url.hasSuffix("/anything?changed=1"))
    }

    @Test(arguments: transports)
    func redirectsTurnPostIntoGetButKeepTheMethodOn307(transport: String) async throws {
        let client = try await client(transport)
        let see = try await client.send(
            "POST", "redirect-to?url=/anything&status_code=303", parameters: ["drop": "me"],
            serializer: JSONResponseSerializer())
        #expect(see.value?["method"]?.stringValue == "GET")
        #expect(see.value?["form"]?.objectValue?.isEmpty ?? true)
        let temporary = try await client.send(
            "POST", "redirect-to?url=/anything&status_code=307", parameters: ["keep": "me"],
            serializer: JSONResponseSerializer())
        #expect(temporary.value?["method"]?.stringValue == "POST")
        #expect(temporary.value?["form"]?["keep"]?.stringValue == "me")
    }

    @Test(arguments: transports)
    func tooManyRedirectsFails(transport: String) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.maximumRedirects = 2
        let client = try await client(transport, configuration: configuration)
        await #expect {
            _ = try await client.get("redirect/3")
        } throws: { error in
            (error as? CourierError)?.errorCode == -1007
        }
    }

    @Test(arguments: transports)
    func basicAuthentication(transport: String) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.credential = Credential(user: "user", password: "passwd")
        let client = try await client(transport, configuration: configuration)
        let response = try await client.get("basic-auth/user/passwd")
        #expect(response.value?["authenticated"] == true)

        let wrong = try await self.client(transport)
        var hooks = SessionHooks()
        let challenges = Locked(0)
        hooks.authenticationChallenge = { _, challenge in
            challenges.withLock { $0 += 1 }
            #expect(challenge.realm == "Fake Realm")
            return challenge.previousFailureCount == 0
                ? .useCredential(Credential(user: "user", password: "nope")) : .rejectProtectionSpace
        }
        wrong.hooks = hooks
        await #expect {
            _ = try await wrong.get("basic-auth/user/passwd")
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 401
        }
        #expect(challenges.value == 2)
    }

    @Test(arguments: transports)
    func hiddenBasicAuthNeedsTheHeaderUpFront(transport: String) async throws {
        let client = try await client(transport)
        await #expect {
            _ = try await client.get("hidden-basic-auth/user/passwd")
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 404
        }
        var serializer = HTTPRequestSerializer()
        serializer.setAuthorization(username: "user", password: "passwd")
        client.requestSerializer = serializer
        let response = try await client.get("hidden-basic-auth/user/passwd")
        #expect(response.value?["authenticated"] == true)
    }

    @Test(arguments: transports)
    func digestAuthentication(transport: String) async throws {
        var configuration = SessionConfiguration.default
        configuration.cookieStore = CookieJar()
        configuration.credential = Credential(user: "user", password: "passwd")
        let client = try await client(transport, configuration: configuration)
        let response = try await client.get("digest-auth/auth/user/passwd")
        #expect(response.value?["authenticated"] == true)
    }

    @Test(arguments: transports)
    func requestTimeoutFiresAndCancellationCancels(transport: String) async throws {
        let client = try await client(transport)
        var serializer = HTTPRequestSerializer()
        serializer.timeoutInterval = 0.5
        client.requestSerializer = serializer
        let started = Date()
        await #expect {
            _ = try await client.get("delay/5")
        } throws: { error in
            (error as? CourierError)?.errorCode == -1001
        }
        // Well before the 5 s the server would take (the margin is for a loaded machine).
        #expect(Date().timeIntervalSince(started) < 4.5)

        client.requestSerializer = HTTPRequestSerializer()
        let call = Task { try await client.get("delay/5") }
        try await Task.sleep(for: .milliseconds(300))
        call.cancel()
        let cancelledAt = Date()
        await #expect {
            _ = try await call.value
        } throws: { error in
            (error as? CourierError)?.errorCode == -999
        }
        #expect(Date().timeIntervalSince(cancelledAt) < 2)
        #expect(client.tasks.isEmpty)
    }

    @Test(arguments: transports)
    func compressedBodiesAreDecoded(transport: String) async throws {
        let client = try await client(transport)
        for encoding in ["gzip", "deflate"] {
            let response = try await client.get(encoding)
            #expect(response.value?[encoding == "gzip" ? "gzipped" : "deflated"] == true, "\(encoding)")
        }
    }

    @Test(arguments: transports)
    func cookiesAreStoredAndSent(transport: String) async throws {
        var configuration = SessionConfiguration.default
        let jar = CookieJar()
        configuration.cookieStore = jar
        let client = try await client(transport, configuration: configuration)
        let response = try await client.get("cookies/set", parameters: ["flavour": "oat"])
        #expect(response.value?["cookies"]?["flavour"] == "oat")
        #expect(jar.cookies.map { "\($0.name)=\($0.value)" } == ["flavour=oat"])
        let again = try await client.get("cookies")
        #expect(again.value?["cookies"]?["flavour"] == "oat")
    }

    /// Foundation's storage behind ``FoundationCookieStore`` still works as a session's store.
    @Test(arguments: transports)
    func foundationCookieStorageAsStore(transport: String) async throws {
        var configuration = SessionConfiguration.default
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: UUID().uuidString)
        configuration.cookieStore = FoundationCookieStore(storage)
        let client = try await client(transport, configuration: configuration)
        _ = try await client.get("cookies/set", parameters: ["flavour": "rye"])
        #expect((storage.cookies ?? []).map { "\($0.name)=\($0.value)" } == ["flavour=rye"])
        let again = try await client.get("cookies")
        #expect(again.value?["cookies"]?["flavour"] == "rye")
    }

    @Test(arguments: transports)
    func streamAndBytes(transport: String) async throws {
        let client = try await client(transport)
        let stream = try await client.send("GET", "stream/20", serializer: StringResponseSerializer())
        #expect(stream.value.split(separator: "\n").count == 20)
        let bytes = try await client.send(
            "GET", "bytes/100000", parameters: ["seed": 1], serializer: HTTPResponseSerializer())
        #expect(bytes.data.count == 100_000)
        #expect(bytes.value == bytes.data)
    }

    @Test(arguments: transports)
    func progressReachesExactlyOne(transport: String) async throws {
        let client = try await client(transport)
        client.responseSerializer = HTTPResponseSerializer()
        let download = Locked([TaskProgress]())
        let upload = Locked([TaskProgress]())
        let done = Outcome()
        let url = try await HTTPBin.url("anything")
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let payload = Data(repeating: 7, count: 300_000)
        let task = client.uploadTask(
            with: request, from: payload, progress: { progress in upload.withLock { $0.append(progress) } }
        ) { _, _, error in done.fulfill(error) }
        task.resume()
        #expect(try await done.value() == nil)
        #expect(upload.value.last?.fractionCompleted == 1.0)
        #expect(upload.value.last?.completed == 300_000)

        let downloadDone = Outcome()
        let get = client.dataTask(
            with: URLRequest(url: try await HTTPBin.url("bytes/100000")),
            downloadProgress: { progress in download.withLock { $0.append(progress) } }
        ) { _, _, error in downloadDone.fulfill(error) }
        get.resume()
        #expect(try await downloadDone.value() == nil)
        #expect(download.value.last?.fractionCompleted == 1.0)
        #expect(download.value.last?.completed == 100_000)
        #expect(download.value.map(\.completed) == download.value.map(\.completed).sorted())
    }

    @Test(arguments: transports)
    func notificationsAndEventsFireOncePerChange(transport: String) async throws {
        let client = try await client(transport)
        let url = try await HTTPBin.url("get")
        let task = client.dataTask(with: URLRequest(url: url), completionHandler: nil)
        let counts = Locked([Notification.Name: Int]())
        let observers = [Notification.Name.taskDidResume, .taskDidSuspend, .taskDidComplete].map { name in
            NotificationCenter.default.addObserver(forName: name, object: task, queue: nil) { _ in
                counts.withLock { $0[name, default: 0] += 1 }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let events = client.events()
        let finished = Outcome()
        let collector = Task {
            var seen: [String] = []
            for await event in events {
                switch event {
                case .didResume(let t) where t === task: seen.append("resume")
                case .didSuspend(let t) where t === task: seen.append("suspend")
                case .didComplete(let t, _) where t === task:
                    seen.append("complete")
                    finished.fulfill(nil)
                    return seen
                default: break
                }
            }
            return seen
        }
        task.resume()
        task.resume()
        _ = try await finished.value()
        task.resume()
        task.suspend()
        let seen = await collector.value
        #expect(seen == ["resume", "complete"])
        // The notifications go through the main queue: wait for them, then for any extra one.
        let deadline = ContinuousClock.now + .seconds(10)
        while counts.value[.taskDidComplete] == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(counts.value[.taskDidResume] == 1)
        #expect(counts.value[.taskDidSuspend] == nil)
        #expect(counts.value[.taskDidComplete] == 1)
    }

    @Test(arguments: transports)
    func twoHundredConcurrentRequestsCompleteExactlyOnce(transport: String) async throws {
        let client = try await client(transport)
        let completions = Locked([Int: Int]())
        let group = DispatchGroup()
        let url = try await HTTPBin.url("get")
        var tasks: [DataTask] = []
        for index in 0..<200 {
            group.enter()
            var request = URLRequest(url: url.appendingPathComponent("").deletingLastPathComponent())
            request.url = URL(string: url.absoluteString + "?i=\(index)")
            let task = client.dataTask(with: request) { _, object, error in
                #expect(error == nil)
                #expect((object as? JSON)?["args"]?["i"]?.stringValue == "\(index)")
                completions.withLock { $0[index, default: 0] += 1 }
                group.leave()
            }
            tasks.append(task)
        }
        tasks.forEach { $0.resume() }
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        await client.settle()
        #expect(completions.value.count == 200)
        #expect(completions.value.values.allSatisfy { $0 == 1 })
        #expect(client.tasks.isEmpty)
        #expect(tasks.allSatisfy { $0.state == .completed })
    }

    @Test(arguments: transports)
    func callbackAPIDeliversSuccessAndFailureOnTheCompletionQueue(transport: String) async throws {
        let client = try await client(transport)
        let queue = DispatchQueue(label: "callbacks")
        client.completionQueue = queue
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let success = Outcome()
        let task = client.get(
            "get", parameters: ["a": 1],
            success: { task, object in
                #expect(DispatchQueue.getSpecific(key: key) == 42)
                #expect((object as? JSON)?["args"]?["a"] == "1")
                #expect(task.state == .completed)
                success.fulfill(nil)
            }, failure: { _, error in success.fulfill(error) })
        #expect(task != nil)
        #expect(try await success.value() == nil)

        let failure = Outcome()
        client.get(
            "status/500",
            failure: { task, error in
                #expect(task != nil)
                failure.fulfill(error)
            })
        #expect((try await failure.value() as? CourierError)?.errorCode == -1011)

        let invalid = Outcome()
        let none = client.get(
            "http://[::1",
            failure: { task, error in
                #expect(task == nil)
                invalid.fulfill(error)
            })
        #expect(none == nil)
        #expect((try await invalid.value() as? CourierError)?.errorCode == -1000)
    }

    @Test(arguments: transports)
    func downloadTaskMovesTheFileToItsDestination(transport: String) async throws {
        let client = try await client(transport)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("sub/file.bin")
        let done = Outcome()
        let moved = Locked<URL?>(nil)
        let task = client.downloadTask(
            with: URLRequest(url: try await HTTPBin.url("bytes/50000")), destination: { _, _ in destination },
            options: [.createIntermediateDirectories]
        ) { _, object, error in
            moved.withLock { $0 = object as? URL }
            done.fulfill(error)
        }
        task.resume()
        #expect(try await done.value() == nil)
        #expect(moved.value == destination)
        let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber
        #expect(size?.intValue == 50_000)
    }
}

/// An error (or success) delivered once from a callback, awaited by the test.
final class Outcome: Sendable {
    private let state = Locked<(done: Bool, error: (any Error)?, waiter: CheckedContinuation<(any Error)?, Never>?)>(
        (false, nil, nil))

    func fulfill(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<(any Error)?, Never>? in
            guard !state.done else { return nil }
            state.done = true
            state.error = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: error)
    }

    func value() async throws -> (any Error)? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (Bool, (any Error)?) in
                if !state.done { state.waiter = continuation }
                return (state.done, state.error)
            }
            if ready.0 { continuation.resume(returning: ready.1) }
        }
    }
}
