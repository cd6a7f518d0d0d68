import Crypto
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking 2's operation API on Courier: ``URLConnectionOperation``, ``HTTPRequestOperation`` and
/// ``HTTPRequestOperationManager``, on both transports, against real servers on 127.0.0.1.
@Suite(.timeLimit(.minutes(2))) struct OperationTests {
    /// Runs `operations` on a queue of `width` and waits until every one has finished.
    private func run(_ operations: [Operation], width: Int = OperationQueue.defaultMaxConcurrentOperationCount)
        async throws
    {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = width
        for operation in operations { queue.addOperation(operation) }
        try await waitUntil(timeout: .seconds(30)) { operations.allSatisfy(\.isFinished) }
    }

    /// Calls made to a completion block, in order.
    private final class Calls: Sendable {
        let entries = Locked([String]())
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }

        /// The calls of `operation`'s success and failure blocks: `success`, or `failure <error code>`.
        static func recording(_ operation: HTTPRequestOperation) -> Calls {
            let calls = Calls()
            operation.setCompletionBlock(
                success: { _, _ in calls.add("success") },
                failure: { _, error in calls.add("failure \((error as? CourierError)?.errorCode ?? 0)") })
            return calls
        }
    }

    // MARK: The manager's verbs

    @Test("The manager's verbs send their methods and parameters and serialize JSON", arguments: TestTransports.names)
    func verbs(transport: String) async throws {
        let base = try await HTTPBin.url("/")
        let manager = HTTPRequestOperationManager(baseURL: base, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "OperationTests.verbs")
        let calls = Calls()
        let methods = Locked([String: String]())
        func record(_ name: String) -> @Sendable (HTTPRequestOperation, (any Sendable)?) -> Void {
            { operation, object in
                let json = object as? JSON
                let sent = json?["form"]?["a"]?.stringValue ?? json?["args"]?["a"]?.stringValue ?? "-"
                methods.withLock { $0[name] = "\(operation.request.httpMethod ?? "") \(sent)" }
                calls.add(name)
            }
        }
        let failure: @Sendable (HTTPRequestOperation?, any Error) -> Void = { _, error in calls.add("failure \(error)")
        }
        let operations: [HTTPRequestOperation?] = [
            manager.get("get", parameters: ["a": "1"], success: record("get"), failure: failure),
            manager.post("post", parameters: ["a": "2"], success: record("post"), failure: failure),
            manager.put("put", parameters: ["a": "3"], success: record("put"), failure: failure),
            manager.patch("patch", parameters: ["a": "4"], success: record("patch"), failure: failure),
            manager.delete("delete", parameters: ["a": "5"], success: record("delete"), failure: failure),
            manager.head("get", parameters: nil, success: { _ in calls.add("head") }, failure: failure),
            manager.post(
                "post", parameters: ["a": "6"], constructingBodyWith: { $0.append(Data("x".utf8), name: "f") },
                success: record("multipart"), failure: failure),
        ]
        #expect(operations.allSatisfy { $0 != nil })
        try await waitUntil(timeout: .seconds(30)) { calls.all.count == 7 }
        #expect(!calls.all.contains { $0.hasPrefix("failure") }, "\(calls.all)")
        let seen = methods.value
        #expect(seen["get"] == "GET 1")
        #expect(seen["post"] == "POST 2")
        #expect(seen["put"] == "PUT 3")
        #expect(seen["patch"] == "PATCH 4")
        #expect(seen["delete"] == "DELETE 5")
        #expect(seen["multipart"] == "POST 6")
        #expect(calls.all.contains("head"))
    }

    @Test("A request that cannot be built fails with a nil operation, asynchronously, and nothing is enqueued")
    func unbuildableRequest() async throws {
        let manager = HTTPRequestOperationManager(baseURL: nil)
        let failed = Locked<(Bool, Int?)?>(nil)
        let operation = manager.get(
            "http://[::1", parameters: nil, success: { _, _ in },
            failure: { operation, error in
                failed.withLock { $0 = (operation == nil, (error as? CourierError)?.errorCode) }
            })
        #expect(operation == nil)
        try await waitUntil(timeout: .seconds(10)) { failed.value != nil }
        #expect(failed.value?.0 == true)
        #expect(failed.value?.1 == -1000)
        #expect(manager.operationQueue.operationCount == 0)
    }

    // MARK: Queues and dependencies

    @Test(
        "Three operations on a queue of width 2: the server never sees more than 2 at once",
        arguments: TestTransports.names)
    func queueWidth(transport: String) async throws {
        // The server holds the first answers until two requests are in flight at once, then lets each go 0.3 s
        // later, so a queue that ran all three at once would show 3. A fixed delay (1.5 s) was too short in CI:
        // under the full suite the queue started the second operation after the first had been answered.
        let server = try await FaultServer.start(.together(count: 2, linger: 0.3, atMost: 20))
        let kind = TestTransports.make(transport)
        let operations = (0..<3).map { _ in
            HTTPRequestOperation(request: URLRequest(url: server.baseURL), transport: kind)
        }
        try await run(operations, width: 2)
        #expect(server.requestCount == 3)
        #expect(server.maxRequestsInFlight == 2)
        #expect(operations.allSatisfy { $0.error == nil && $0.responseString == "hello" })
        await kind.shutdown()
        try await server.stop()
    }

    @Test("An operation that depends on another starts only after it has finished", arguments: TestTransports.names)
    func dependencies(transport: String) async throws {
        let server = try await FaultServer.start(.slow(headAfter: 0.2))
        let kind = TestTransports.make(transport)
        let first = URLConnectionOperation(request: URLRequest(url: server.baseURL), transport: kind)
        let second = URLConnectionOperation(request: URLRequest(url: server.baseURL), transport: kind)
        second.addDependency(first)
        let firstDoneAtSecondStart = Locked<Bool?>(nil)
        let observer = NotificationCenter.default.addObserver(
            forName: .operationDidStart, object: second, queue: nil
        ) { _ in firstDoneAtSecondStart.withLock { $0 = first.isFinished } }
        defer { NotificationCenter.default.removeObserver(observer) }
        try await run([second, first], width: 2)
        #expect(firstDoneAtSecondStart.value == true)
        #expect(second.responseData == Data("hello".utf8))
        await kind.shutdown()
        try await server.stop()
    }

    // MARK: Pause and resume

    /// 4 MiB that stops after 1 MiB until the test lets it go on.
    private static let body = TestBytes.random(count: 4 << 20, seed: 31)

    private func pausedDownload(transport: String, changeBeforeResume: Bool) async throws {
        let server = try await RangeServer.start(Self.body, chunkSize: 64 * 1024, holds: [1 << 20])
        let kind = TestTransports.make(transport)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-op-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let operation = HTTPRequestOperation(request: URLRequest(url: server.fileURL), transport: kind)
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        operation.completionQueue = DispatchQueue(label: "OperationTests.progress")
        let totals = Locked([Int64]())
        operation.setDownloadProgressBlock { _, total, _ in totals.withLock { $0.append(total) } }
        let completions = Locked(0)
        operation.setCompletionBlock(
            success: { _, _ in completions.withLock { $0 += 1 } }, failure: { _, _ in completions.withLock { $0 += 1 } }
        )
        let notified = Locked([String]())
        let observers = [Notification.Name.operationDidStart, .operationDidFinish].map { name in
            NotificationCenter.default.addObserver(forName: name, object: operation, queue: nil) { _ in
                notified.withLock { $0.append(name == .operationDidStart ? "start" : "finish") }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let queue = OperationQueue()
        queue.addOperation(operation)
        try await waitUntil(timeout: .seconds(20)) { totals.withLock { $0.last } == 1 << 20 }
        operation.pause()
        #expect(operation.isPaused)
        #expect(!operation.isExecuting && !operation.isFinished)
        #expect(operation.request.value(forHTTPHeaderField: "Range") == "bytes=\(1 << 20)-")
        #expect(operation.request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        let changed = Data(Self.body.reversed())
        if changeBeforeResume { server.replace(with: changed, entityTag: "\"v2\"") }
        server.proceed()
        operation.resume()
        try await waitUntil(timeout: .seconds(30)) { operation.isFinished }
        try await waitUntil(timeout: .seconds(10)) { completions.value == 1 }
        #expect(operation.error == nil, "\(String(describing: operation.error))")
        // The did-finish notification is posted just after the state changes, so it may trail the completion block.
        try await waitUntil(timeout: .seconds(10)) { notified.value.count >= 4 }
        #expect(notified.value == ["start", "finish", "start", "finish"])
        let last = try #require(server.requests.last)
        #expect(last.range == "bytes=\(1 << 20)-")
        #expect(last.ifRange == "\"v1\"")
        #expect(operation.response?.statusCode == (changeBeforeResume ? 200 : 206))
        let written = try Data(contentsOf: file)
        let expected = changeBeforeResume ? changed : Self.body
        #expect(written.count == expected.count)
        #expect(Data(SHA256.hash(data: written)) == Data(SHA256.hash(data: expected)))
        let seen = totals.value
        #expect(seen.last == Int64(expected.count))
        if !changeBeforeResume { #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }) }
        await kind.shutdown()
        try await server.stop()
    }

    @Test(
        "A paused 4 MiB download to a file resumes with Range and If-Range and ends whole",
        arguments: TestTransports.names)
    func pauseAndResume(transport: String) async throws {
        try await pausedDownload(transport: transport, changeBeforeResume: false)
    }

    @Test(
        "A resume answered with 200 (the file changed) starts the file again from zero", arguments: TestTransports.names
    )
    func resumeAnsweredWithWholeBody(transport: String) async throws {
        try await pausedDownload(transport: transport, changeBeforeResume: true)
    }

    @Test("pause() does nothing on a finished or cancelled operation; on a ready one it holds it back until resume()")
    func pauseStates() async throws {
        let server = try await FaultServer.start(.countingConnections)
        let ready = URLConnectionOperation(request: URLRequest(url: server.baseURL))
        ready.pause()
        #expect(ready.isPaused && !ready.isReady)
        let queue = OperationQueue()
        queue.addOperation(ready)
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.requestCount == 0)
        ready.resume()
        try await waitUntil(timeout: .seconds(10)) { ready.isFinished }
        #expect(ready.responseString == "hello")
        ready.pause()
        #expect(ready.isFinished && !ready.isPaused)
        let cancelled = URLConnectionOperation(request: URLRequest(url: server.baseURL))
        cancelled.cancel()
        cancelled.pause()
        #expect(!cancelled.isPaused)
        try await server.stop()
    }

    // MARK: Cancellation

    @Test(
        "Cancelled before it starts: the operation still finishes, with -999 and the failing URL, once",
        arguments: TestTransports.names)
    func cancelBeforeStart(transport: String) async throws {
        let server = try await FaultServer.start(.countingConnections)
        let operation = HTTPRequestOperation(
            request: URLRequest(url: server.baseURL), transport: TestTransports.make(transport))
        let calls = Calls.recording(operation)
        operation.cancel()
        try await run([operation])
        try await waitUntil(timeout: .seconds(10)) { !calls.all.isEmpty }
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.all == ["failure -999"])
        let error = try #require(operation.error as? CourierError)
        #expect(error.errorCode == -999)
        #expect((error as NSError).userInfo[NSURLErrorFailingURLErrorKey] as? URL == server.baseURL)
        #expect(server.requestCount == 0)
        try await server.stop()
    }

    @Test(
        "Cancelled while running: the request stops and the operation finishes with -999, once",
        arguments: TestTransports.names)
    func cancelWhileRunning(transport: String) async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))
        let kind = TestTransports.make(transport)
        let operation = HTTPRequestOperation(request: URLRequest(url: server.baseURL), transport: kind)
        let calls = Calls.recording(operation)
        let finished = Locked(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .operationDidFinish, object: operation, queue: nil
        ) { _ in
            finished.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let queue = OperationQueue()
        queue.addOperation(operation)
        try await waitUntil(timeout: .seconds(10)) { server.requestCount == 1 && operation.isExecuting }
        operation.cancel()
        try await waitUntil(timeout: .seconds(5)) { operation.isFinished }
        try await waitUntil(timeout: .seconds(10)) { !calls.all.isEmpty }
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.all == ["failure -999"])
        #expect(finished.value == 1)
        await kind.shutdown()
        try await server.stop()
    }

    // MARK: Blocks, credentials, serialization

    @Test("The redirect block stops a redirect or changes where it goes", arguments: TestTransports.names)
    func redirectBlock(transport: String) async throws {
        let url = try await HTTPBin.url("/redirect-to?url=/get&status_code=302")
        let kind = TestTransports.make(transport)
        let stopped = URLConnectionOperation(request: URLRequest(url: url), transport: kind)
        let seen = Locked([Int]())
        stopped.setRedirectResponseBlock { _, _, response in
            seen.withLock { $0.append(response?.statusCode ?? 0) }
            return nil
        }
        let changed = URLConnectionOperation(request: URLRequest(url: url), transport: kind)
        changed.setRedirectResponseBlock { _, proposed, _ in
            var request = proposed
            request.url = proposed.url.flatMap { URL(string: "/anything?changed=1", relativeTo: $0)?.absoluteURL }
            return request
        }
        try await run([stopped, changed])
        #expect(seen.value == [302])
        #expect(stopped.error == nil)
        #expect(stopped.response?.statusCode == 302)
        #expect(changed.response?.statusCode == 200)
        #expect(changed.responseString?.contains("changed=1") == true)
    }

    @Test(
        "The credential answers a Basic challenge once; the challenge block can answer instead",
        arguments: TestTransports.names)
    func authentication(transport: String) async throws {
        let url = try await HTTPBin.url("/basic-auth/user/passwd")
        let kind = TestTransports.make(transport)
        let withCredential = HTTPRequestOperation(request: URLRequest(url: url), transport: kind)
        withCredential.credential = Credential(user: "user", password: "passwd")
        let withBlock = HTTPRequestOperation(request: URLRequest(url: url), transport: kind)
        let asked = Locked(0)
        withBlock.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            asked.withLock { $0 += 1 }
            return challenge.previousFailureCount == 0
                ? .useCredential(Credential(user: "user", password: "passwd")) : .rejectProtectionSpace
        }
        let wrong = HTTPRequestOperation(request: URLRequest(url: url), transport: kind)
        wrong.credential = Credential(user: "user", password: "wrong")
        let none = HTTPRequestOperation(request: URLRequest(url: url), transport: kind)
        none.shouldUseCredentialStorage = false
        try await run([withCredential, withBlock, wrong, none])
        #expect(withCredential.response?.statusCode == 200)
        #expect(withCredential.error == nil)
        #expect(withBlock.response?.statusCode == 200)
        #expect(asked.value == 1)
        #expect(wrong.response?.statusCode == 401)
        #expect((wrong.error as? CourierError)?.errorCode == -1011)
        #expect(none.response?.statusCode == 401)
    }

    @Test(
        "A 404 fails the serializer: its error becomes the operation's, and the failure block gets it",
        arguments: TestTransports.names)
    func serializationError(transport: String) async throws {
        let url = try await HTTPBin.url("/status/404")
        let operation = HTTPRequestOperation(request: URLRequest(url: url), transport: TestTransports.make(transport))
        let calls = Calls.recording(operation)
        try await run([operation])
        try await waitUntil(timeout: .seconds(10)) { !calls.all.isEmpty }
        #expect(calls.all == ["failure -1011"])
        #expect(operation.responseObject == nil)
        #expect((operation.error as? CourierError)?.errorCode == -1011)
        #expect(operation.response?.statusCode == 404)
    }

    @Test("The cache block decides what the operation's URL cache stores")
    func cacheBlock() async throws {
        let url = try await HTTPBin.url("/cache/60")
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let vetoed = URLConnectionOperation(request: URLRequest(url: url))
        vetoed.urlCache = cache
        let proposed = Locked(0)
        vetoed.setCacheResponseBlock { _, _ in
            proposed.withLock { $0 += 1 }
            return nil
        }
        try await run([vetoed])
        #expect(proposed.value == 1)
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
        let kept = URLConnectionOperation(request: URLRequest(url: url))
        kept.urlCache = cache
        kept.setCacheResponseBlock { _, response in response }
        try await run([kept])
        #expect(cache.cachedResponse(for: URLRequest(url: url))?.data == kept.responseData)
    }

    /// The operation's weak reference, to see it released.
    private struct Weak: Sendable {
        weak var operation: URLConnectionOperation?
    }

    @Test("The completion block is released after it runs, so the operation is released too")
    func completionBlockReleased() async throws {
        let server = try await FaultServer.start(.countingConnections)
        let weak = Locked(Weak())
        let ran = Locked(false)
        do {
            let operation = URLConnectionOperation(request: URLRequest(url: server.baseURL))
            operation.completionBlock = { ran.withLock { $0 = operation.responseString == "hello" } }
            weak.withLock { $0.operation = operation }
            try await run([operation])
        }
        try await waitUntil(timeout: .seconds(10)) { ran.value }
        try await waitUntil(timeout: .seconds(10)) { weak.withLock { $0.operation == nil } }
        try await server.stop()
    }

    // MARK: Batches and progress

    @Test(
        "A batch of 5 reports (1, 5) … (5, 5) in order, each after its operation's completion, then completes",
        arguments: TestTransports.names)
    func batch(transport: String) async throws {
        let server = try await FaultServer.start(.countingConnections)
        let kind = TestTransports.make(transport)
        let events = Calls()
        let operations = (0..<5).map { index in
            let operation = URLConnectionOperation(request: URLRequest(url: server.baseURL), transport: kind)
            operation.completionBlock = { events.add("op\(index)") }
            return operation
        }
        let batch = URLConnectionOperation.batch(
            of: operations, progress: { finished, total in events.add("progress \(finished)/\(total)") },
            completion: { done in events.add("done \(done.count)") })
        #expect(batch.count == 6)
        try await run(batch, width: 3)
        try await waitUntil(timeout: .seconds(10)) { events.all.last?.hasPrefix("done") == true }
        let all = events.all
        #expect(all.filter { $0.hasPrefix("progress") } == (1...5).map { "progress \($0)/5" })
        for n in 1...5 {
            let position = try #require(all.firstIndex(of: "progress \(n)/5"))
            #expect(all[..<position].filter { $0.hasPrefix("op") }.count >= n)
        }
        #expect(all.last == "done 5")
        #expect(all.count == 11)
        await kind.shutdown()
        try await server.stop()
    }

    @Test("An empty batch calls its completion with no operations")
    func emptyBatch() async throws {
        let done = Locked<[URLConnectionOperation]?>(nil)
        let batch = URLConnectionOperation.batch(
            of: [], progress: nil, completion: { operations in done.withLock { $0 = operations } })
        try await run(batch)
        try await waitUntil(timeout: .seconds(10)) { done.value != nil }
        #expect(done.value?.isEmpty == true)
    }

    @Test("Upload and download progress: monotone byte counts that end at the totals", arguments: TestTransports.names)
    func progress(transport: String) async throws {
        let url = try await HTTPBin.url("/anything")
        let upload = Data(repeating: 7, count: 300 * 1024)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue(String(upload.count), forHTTPHeaderField: "Content-Length")
        let operation = HTTPRequestOperation(request: request, transport: TestTransports.make(transport))
        operation.inputStream = InputStream(data: upload)
        operation.completionQueue = DispatchQueue(label: "OperationTests.progress")
        let sent = Locked([Int64]())
        let received = Locked([(Int64, Int64)]())
        operation.setUploadProgressBlock { _, total, _ in sent.withLock { $0.append(total) } }
        operation.setDownloadProgressBlock { _, total, expected in received.withLock { $0.append((total, expected)) } }
        try await run([operation])
        #expect(operation.error == nil, "\(String(describing: operation.error))")
        try await Task.sleep(for: .milliseconds(100))
        let up = sent.value
        #expect(up.last == Int64(upload.count))
        #expect(zip(up, up.dropFirst()).allSatisfy { $0 <= $1 })
        let down = received.value
        let body = try #require(operation.responseData)
        #expect(down.last?.0 == Int64(body.count))
        #expect(zip(down, down.dropFirst()).allSatisfy { $0.0 < $1.0 })
        let echoed = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect((echoed?["data"] as? String)?.count == upload.count)
    }
}
