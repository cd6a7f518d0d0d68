import Crypto
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads that are cancelled with resume data and continued with `Range` + `If-Range`, on every transport.
@Suite(.timeLimit(.minutes(2)))
struct DownloadResumeTests {
    static let transports = TestTransports.names

    /// What a download task ended with.
    struct Finished: Sendable {
        var url: URL?
        var response: HTTPURLResponse?
        var error: (any Error)?
    }

    func manager(_ transport: String) -> SessionManager {
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    static func randomData(count: Int, seed: UInt64) -> Data {
        TestBytes.random(count: count, seed: seed)
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-resume-\(UUID().uuidString)/file.bin")
    }

    /// Starts `make`'s task and waits for its completion.
    func run(_ make: (@escaping TaskCompletionHandler) -> DownloadTask) async -> (DownloadTask, Finished) {
        let finished = Locked<Finished?>(nil)
        let outcome = Outcome()
        let task = make { response, object, error in
            finished.withLock { $0 = Finished(url: object as? URL, response: response, error: error) }
            outcome.fulfill(error)
        }
        task.resume()
        _ = try? await outcome.value()
        return (task, finished.value ?? Finished())
    }

    /// Continues `resumeData` into a new destination; returns how the task ended and the destination.
    func resume(
        _ manager: SessionManager, _ resumeData: Data, progress: (@Sendable (TaskProgress) -> Void)? = nil
    ) async -> (Finished, URL) {
        let destination = Self.destination()
        let (_, finished) = await run { completion in
            manager.downloadTask(
                withResumeData: resumeData, progress: progress, destination: { _, _ in destination },
                options: [.createIntermediateDirectories], completionHandler: completion)
        }
        return (finished, destination)
    }

    /// Starts a download of `request` and cancels it with resume data once the task has received at least `bytes`.
    ///
    /// The task's own count is watched, not its progress reports: those are throttled to one per 50 ms, so when a
    /// burst crosses `bytes` just after a report and the server then holds the body, no report would come.
    func interruptedDownload(
        _ manager: SessionManager, _ request: URLRequest, after bytes: Int64
    ) async throws -> Data? {
        let outcome = Outcome()
        let resumeData = Locked<Data?>(nil)
        let task = manager.downloadTask(with: request, completionHandler: { _, _, error in outcome.fulfill(error) })
        task.resume()
        let deadline = ContinuousClock.now + .seconds(30)
        while task.countOfBytesReceived < bytes, task.state == .running, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(task.countOfBytesReceived >= bytes)
        task.cancel(producingResumeData: { data in resumeData.withLock { $0 = data } })
        let error = try await outcome.value()
        #expect((error as? CourierError)?.errorCode == -999)
        return resumeData.value
    }

    @Test(arguments: transports)
    func resumesWithRangeAndIfRangeIntoAnIdenticalFile(transport: String) async throws {
        let original = Self.randomData(count: 2 << 20, seed: 11)
        // The first response stops at 1 MiB until the resumed one is due: however far a transport reads ahead of
        // the task (URLSession buffers), the cancel at 256 KiB always leaves part of the file to resume.
        let server = try await RangeServer.start(original, chunkSize: 16 * 1024, chunkDelay: 0.005, holds: [1 << 20])
        defer { Task { try await server.stop() } }
        let manager = manager(transport)

        let resumeData = try #require(
            try await interruptedDownload(manager, URLRequest(url: server.fileURL), after: 256 * 1024))
        server.proceed()
        let described = try DownloadResumeData(data: resumeData)
        #expect(described.bytesOnDisk >= 256 * 1024 && described.bytesOnDisk < original.count)
        #expect(described.entityTag == "\"v1\"")
        let partial = try Data(contentsOf: described.temporaryFileURL)
        #expect(partial == original.prefix(Int(described.bytesOnDisk)))

        let progress = Locked([TaskProgress]())
        let (finished, destination) = await resume(
            manager, resumeData, progress: { value in progress.withLock { $0.append(value) } })
        #expect(finished.error == nil)
        #expect(finished.response?.statusCode == 206)
        #expect(finished.url == destination)
        let downloaded = try Data(contentsOf: destination)
        #expect(Self.sha256(downloaded) == Self.sha256(original))
        #expect(server.requests.last?.range == "bytes=\(described.bytesOnDisk)-")
        #expect(server.requests.last?.ifRange == "\"v1\"")
        #expect(!FileManager.default.fileExists(atPath: described.temporaryFileURL.path))
        #expect(progress.value.first.map { $0.completed >= described.bytesOnDisk } == true)
        #expect(progress.value.last?.fractionCompleted == 1.0)
        #expect(progress.value.last?.total == Int64(original.count))
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    /// AFNetworking's session-wide download blocks: `setDownloadTaskDidResumeBlock:` with the offset and total, and
    /// `setDownloadTaskDidWriteDataBlock:` with the file's running totals, the offset counted.
    @Test(arguments: transports)
    func downloadHooksSeeTheResumeAndEveryWrite(transport: String) async throws {
        let original = Self.randomData(count: 1 << 20, seed: 21)
        let server = try await RangeServer.start(original, chunkSize: 16 * 1024, chunkDelay: 0.005, holds: [512 * 1024])
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        let resumeData = try #require(
            try await interruptedDownload(manager, URLRequest(url: server.fileURL), after: 128 * 1024))
        server.proceed()
        let offset = try DownloadResumeData(data: resumeData).bytesOnDisk
        let resumed = Locked<[(Int64, Int64)]>([])
        let writes = Locked<[(Int64, Int64, Int64)]>([])
        var hooks = manager.hooks
        hooks.downloadTaskDidResume = { _, at, total in resumed.withLock { $0.append((at, total)) } }
        hooks.downloadTaskDidWriteData = { _, step, total, expected in
            writes.withLock { $0.append((step, total, expected)) }
        }
        manager.hooks = hooks
        let (finished, destination) = await resume(manager, resumeData, progress: nil)
        #expect(finished.error == nil)
        #expect(resumed.value.count == 1)
        #expect(resumed.value.first?.0 == offset && resumed.value.first?.1 == Int64(original.count))
        let steps = writes.value
        #expect(steps.first.map { $0.1 == offset + $0.0 } == true, "the first total counts the offset")
        #expect(steps.last?.1 == Int64(original.count) && steps.last?.2 == Int64(original.count))
        #expect(steps.reduce(Int64(0)) { $0 + $1.0 } == Int64(original.count) - offset)
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func aChangedValidatorRestartsFromZero(transport: String) async throws {
        let original = Self.randomData(count: 1 << 20, seed: 12)
        // The first response waits at 512 KiB, so the cancel at 128 KiB lands mid-body however late the test's
        // polling task runs on a loaded machine (it once ran 1.6 s late and the whole body had arrived).
        let server = try await RangeServer.start(
            original, chunkSize: 16 * 1024, chunkDelay: 0.005, holds: [512 * 1024])
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        let resumeData = try #require(
            try await interruptedDownload(manager, URLRequest(url: server.fileURL), after: 128 * 1024))
        server.proceed()

        let changed = Self.randomData(count: 300_000, seed: 13)
        server.replace(with: changed, entityTag: "\"v2\"")
        let (finished, destination) = await resume(manager, resumeData)
        #expect(finished.error == nil)
        #expect(finished.response?.statusCode == 200)
        #expect(Self.sha256(try Data(contentsOf: destination)) == Self.sha256(changed))
        #expect(server.requests.last?.ifRange == "\"v1\"")
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func aServerThatIgnoresRangesRestartsFromZero(transport: String) async throws {
        // httpbin's /drip ignores Range and always sends `numbytes` asterisks.
        let url = try await HTTPBin.url("drip?numbytes=20000&duration=0&delay=0")
        let manager = manager(transport)
        // A partial file of the wrong bytes: a 200 must replace it, not be appended to it.
        let (partial, handle) = try TemporaryFiles.makeFile(prefix: "courier-partial")
        try handle.write(contentsOf: Data(repeating: 0x55, count: 5000))
        try handle.close()
        let resumeData = DownloadResumeData(
            url: url, temporaryFileURL: partial, bytesOnDisk: 5000, entityTag: "\"old\"", lastModified: nil
        ).encoded()
        let (finished, resumed) = await resume(manager, resumeData)
        #expect(finished.error == nil)
        #expect(finished.response?.statusCode == 200)
        let expected = Data(repeating: UInt8(ascii: "*"), count: 20000)
        #expect(Self.sha256(try Data(contentsOf: resumed)) == Self.sha256(expected))
        try? FileManager.default.removeItem(at: resumed.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func httpbinRangeResumes(transport: String) async throws {
        // httpbin cannot hold a body, so it is spread over 20 s: the cancel after 10 kB lands mid-body even when
        // the polling task runs seconds late on a loaded machine; the test still ends at the cancel.
        let url = try await HTTPBin.url("range/102400?duration=20&chunk_size=1024")
        let manager = manager(transport)
        let resumeData = try #require(try await interruptedDownload(manager, URLRequest(url: url), after: 10_000))
        #expect(try DownloadResumeData(data: resumeData).entityTag == "range102400")
        let (finished, destination) = await resume(manager, resumeData)
        #expect(finished.error == nil)
        #expect(finished.response?.statusCode == 206)
        let expected = TestBytes.periodic(count: 102_400, period: 26) { UInt8(ascii: "a") + UInt8($0 % 26) }
        #expect(Self.sha256(try Data(contentsOf: destination)) == Self.sha256(expected))
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func aRangePastTheEndFetchesTheWholeResource(transport: String) async throws {
        let current = Self.randomData(count: 1000, seed: 14)
        let server = try await RangeServer.start(current)
        defer { Task { try await server.stop() } }
        // Only Courier's own temporary files can be continued (see `TemporaryFiles`).
        let (partial, handle) = try TemporaryFiles.makeFile(prefix: "courier-partial")
        try handle.write(contentsOf: Data(repeating: 1, count: 5000))
        try handle.close()
        let resumeData = DownloadResumeData(
            url: server.fileURL, temporaryFileURL: partial, bytesOnDisk: 5000, entityTag: "\"v1\"",
            lastModified: nil
        ).encoded()
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let (finished, destination) = await resume(manager, resumeData)
        #expect(finished.error == nil)
        #expect(try Data(contentsOf: destination) == current)
        #expect(server.requests.map(\.range) == ["bytes=5000-", nil])
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func noStrongValidatorMeansNoResumeData(transport: String) async throws {
        // No ETag and no Last-Modified; the body waits at 64 KiB, so the cancel always lands mid-body.
        let server = try await RangeServer.start(
            Self.randomData(count: 256 * 1024, seed: 5), entityTag: nil, holds: [64 * 1024])
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let resumeData = try await interruptedDownload(manager, URLRequest(url: server.fileURL), after: 16 * 1024)
        server.proceed()
        #expect(resumeData == nil)
    }

    @Test(arguments: transports)
    func cancellingBeforeTheStartGivesNoResumeData(transport: String) async throws {
        let url = try await HTTPBin.url("bytes/10")
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let task = manager.downloadTask(with: URLRequest(url: url), completionHandler: nil)
        #expect(await task.cancelProducingResumeData() == nil)
        #expect(task.state == .completed)
    }

    @Test(arguments: transports)
    func dataThatIsNotResumeDataFailsTheTask(transport: String) async throws {
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let (_, finished) = await run { completion in
            manager.downloadTask(withResumeData: Data("nonsense".utf8), completionHandler: completion)
        }
        let error = try #require(finished.error as? CourierError)
        #expect(error.errorCode == -3000)
        #expect(error.localizedDescription.contains("resume data"))
    }

    @Test
    func resumeDataRoundTripsAndSkipsWeakEntityTags() throws {
        let url = try #require(URL(string: "http://127.0.0.1/x"))
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["ETag": "W/\"weak\"", "Last-Modified": "Sun, 22 Nov 2026 05:00:00 GMT"]))
        var request = URLRequest(url: url)
        request.setValue("bytes=1-", forHTTPHeaderField: "Range")
        request.setValue("token", forHTTPHeaderField: "X-Token")
        let file = URL(fileURLWithPath: "/tmp/partial")
        let made = try #require(
            DownloadResumeData.make(request: request, response: response, file: file, bytesOnDisk: 42))
        #expect(made.entityTag == nil)
        #expect(made.headers == ["X-Token": "token"])
        #expect(try DownloadResumeData(data: made.encoded()) == made)
        let next = made.makeRequest()
        #expect(next.value(forHTTPHeaderField: "Range") == "bytes=42-")
        #expect(next.value(forHTTPHeaderField: "If-Range") == "Sun, 22 Nov 2026 05:00:00 GMT")
        let bare = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: [:]))
        #expect(DownloadResumeData.make(request: request, response: bare, file: file, bytesOnDisk: 42) == nil)
    }

    @Test(arguments: transports)
    func asyncDownloadWritesTheFileAndThrowsForAnErrorStatus(transport: String) async throws {
        let manager = HTTPSessionManager(
            baseURL: try await HTTPBin.shared.url(), configuration: .ephemeral,
            transport: TestTransports.make(transport))
        let destination = Self.destination()
        let progress = Locked([TaskProgress]())
        let response = try await manager.download(
            "range/5000", to: destination, options: [.createIntermediateDirectories],
            progress: { value in progress.withLock { $0.append(value) } })
        #expect(response.value == destination)
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: destination) == Data((0..<5000).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
        #expect(progress.value.last?.fractionCompleted == 1.0)
        await #expect(throws: CourierError.self) {
            _ = try await manager.download("status/404", to: destination)
        }
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    @Test(arguments: transports)
    func cancellingAnAsyncDownloadCancelsTheTask(transport: String) async throws {
        let server = try await RangeServer.start(Data(count: 1 << 20), chunkSize: 1024, chunkDelay: 0.01)
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let destination = Self.destination()
        let download = Task { try await manager.download(URLRequest(url: server.fileURL), to: destination) }
        while manager.downloadTasks.first.map({ $0.countOfBytesReceived == 0 }) ?? true {
            try await Task.sleep(for: .milliseconds(10))
        }
        download.cancel()
        let result = await download.result
        #expect((result.failure as? CourierError)?.errorCode == -999)
        #expect(manager.downloadTasks.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
