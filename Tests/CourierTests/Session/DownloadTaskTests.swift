import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where finished downloads go: destinations and their options, the manager-level hook, AFNetworking's
/// notifications, and the temporary file's lifetime; each test on both transports.
@Suite(.timeLimit(.minutes(1)))
struct DownloadTaskTests {
    struct Finished: Sendable {
        var url: URL?
        var error: (any Error)?
        /// Whether the delivered file existed while the completion handler ran.
        var existedDuringCompletion: Bool
    }

    let body = TestBytes.periodic(count: 100_000) { UInt8(truncatingIfNeeded: $0 &* 7) }

    func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString)")
    }

    func download(
        _ manager: SessionManager, _ url: URL, destination: DownloadDestination?, options: DownloadOptions = []
    ) async -> (DownloadTask, Finished) {
        let outcome = Outcome()
        let finished = Locked<Finished?>(nil)
        let task = manager.downloadTask(with: URLRequest(url: url), destination: destination, options: options) {
            _, object, error in
            let file = object as? URL
            finished.withLock {
                $0 = Finished(
                    url: file, error: error,
                    existedDuringCompletion: file.map { FileManager.default.fileExists(atPath: $0.path) } ?? false)
            }
            outcome.fulfill(error)
        }
        task.resume()
        _ = try? await outcome.value()
        return (task, finished.value ?? Finished(existedDuringCompletion: false))
    }

    /// Counts the notification `name` posted for `task`s of this test only.
    final class NotificationCounter: Sendable {
        private let count = Locked(0)
        private let observer: Locked<(any NSObjectProtocol)?> = Locked(nil)

        init(_ name: Notification.Name, object: @escaping @Sendable (Any?) -> Bool) {
            let count = count
            let token = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
                notification in
                if object(notification.object) { count.withLock { $0 += 1 } }
            }
            observer.withLock { $0 = token }
        }

        var value: Int { count.value }

        deinit {
            if let token = observer.withLock({ $0 }) { NotificationCenter.default.removeObserver(token) }
        }
    }

    @Test(arguments: FaultTransportKind.all)
    func aMovedDownloadPostsMovedSuccessfullyOnce(_ kind: FaultTransportKind) async throws {
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let target = folder().appendingPathComponent("nested/file.bin")
        let moved = NotificationCounter(.downloadTaskDidMoveFileSuccessfully) {
            ($0 as? DownloadTask)?.originalRequest?.url == server.fileURL
        }
        let (_, finished) = await download(
            manager, server.fileURL, destination: { _, _ in target }, options: [.createIntermediateDirectories])
        #expect(finished.error == nil)
        #expect(finished.url == target)
        #expect(try Data(contentsOf: target) == body)
        #expect(moved.value == 1)
        try? FileManager.default.removeItem(at: target.deletingLastPathComponent().deletingLastPathComponent())
    }

    @Test(arguments: FaultTransportKind.all)
    func aResponseHookTurnsADataTaskIntoADownloadOrCancelsIt(_ kind: FaultTransportKind) async throws {
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        let completionQueue = DispatchQueue(label: "test.completion")
        manager.completionQueue = completionQueue
        let disposition = Locked(ResponseDisposition.becomeDownload)
        manager.hooks.didReceiveResponse = { _, _ in disposition.value }
        // AFNetworking's `setDataTaskDidBecomeDownloadTaskBlock:`: told once, before the body is written.
        let becameDownload = Locked<[Int64]>([])
        manager.hooks.dataTaskDidBecomeDownload = { task in
            becameDownload.withLock { $0.append(task.countOfBytesReceived) }
        }
        func run() async -> (object: (any Sendable)?, error: (any Error)?, bytes: Data?) {
            let outcome = Outcome()
            let result = Locked<((any Sendable)?, (any Error)?, Data?)>((nil, nil, nil))
            let task = manager.dataTask(with: URLRequest(url: server.fileURL)) { _, object, error in
                // The file is the handler's to read while it runs.
                let bytes = (object as? URL).flatMap { try? Data(contentsOf: $0) }
                result.withLock { $0 = (object, error, bytes) }
                outcome.fulfill(error)
            }
            task.resume()
            _ = try? await outcome.value()
            return result.value
        }
        let downloaded = await run()
        #expect(downloaded.error == nil)
        let file = try #require(downloaded.object as? URL)
        #expect(downloaded.bytes == body)
        completionQueue.sync {}  // the handler's block, which deletes the file after it, has finished
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(becameDownload.value == [0])

        disposition.withLock { $0 = .cancel }
        let cancelled = await run()
        #expect((cancelled.error as? CourierError)?.errorCode == -999)
        #expect(cancelled.object == nil)
        #expect(becameDownload.value.count == 1, "a cancelled response did not become a download")
    }

    @Test(arguments: FaultTransportKind.all)
    func aMoveThatFailsPostsFailedToMoveAndFailsTheTask(_ kind: FaultTransportKind) async throws {
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let failed = NotificationCounter(.downloadTaskDidFailToMoveFile) {
            ($0 as? DownloadTask)?.originalRequest?.url == server.fileURL
        }
        // The folder does not exist and the options do not allow creating it.
        let target = folder().appendingPathComponent("missing/file.bin")
        let (_, finished) = await download(manager, server.fileURL, destination: { _, _ in target })
        #expect((finished.error as? CourierError)?.errorCode == -3000)
        #expect(failed.value == 1)
        #expect(!FileManager.default.fileExists(atPath: target.path))

        // An existing file is only replaced with removePreviousFile.
        let existing = folder().appendingPathComponent("file.bin")
        try FileManager.default.createDirectory(
            at: existing.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: existing)
        let (_, kept) = await download(manager, server.fileURL, destination: { _, _ in existing })
        #expect((kept.error as? CourierError)?.errorCode == -3000)
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        let (_, replaced) = await download(
            manager, server.fileURL, destination: { _, _ in existing }, options: [.removePreviousFile])
        #expect(replaced.error == nil)
        #expect(try Data(contentsOf: existing) == body)
        try? FileManager.default.removeItem(at: existing.deletingLastPathComponent())
    }

    @Test(arguments: FaultTransportKind.all)
    func theManagerHookTakesPrecedenceOverTheTaskDestination(_ kind: FaultTransportKind) async throws {
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let base = folder()
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let chosenByHook = base.appendingPathComponent("hook.bin")
        let chosenByTask = base.appendingPathComponent("task.bin")
        manager.hooks.downloadTaskDidFinishDownloading = { _, _, _ in chosenByHook }
        let (_, finished) = await download(manager, server.fileURL, destination: { _, _ in chosenByTask })
        #expect(finished.url == chosenByHook)
        #expect(try Data(contentsOf: chosenByHook) == body)
        #expect(!FileManager.default.fileExists(atPath: chosenByTask.path))
        try? FileManager.default.removeItem(at: base)
    }

    @Test(arguments: FaultTransportKind.all)
    func withoutADestinationTheTemporaryFileLivesOnlyDuringTheCompletionHandler(_ kind: FaultTransportKind) async throws
    {
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let (_, finished) = await download(manager, server.fileURL, destination: nil)
        let temporary = try #require(finished.url)
        #expect(finished.existedDuringCompletion)
        // The file goes once the handler has returned, which the handler's own signal cannot wait for.
        await manager.settle()
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }

    @Test(arguments: FaultTransportKind.all)
    func aFailedDownloadLeavesNoTemporaryFile(_ kind: FaultTransportKind) async throws {
        let server = try await FaultServer.start(.closeMidBody)
        defer { Task { try await server.stop() } }
        let manager = SessionManager(configuration: .ephemeral, transport: kind.make())
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let outcome = Outcome()
        let watched = Locked<TaskDelegate?>(nil)
        let existedWhileDownloading = Locked(false)
        let task = manager.downloadTask(
            with: URLRequest(url: server.baseURL),
            progress: { _ in
                guard let url = watched.withLock({ $0 })?.downloadFile?.url else { return }
                if FileManager.default.fileExists(atPath: url.path) { existedWhileDownloading.withLock { $0 = true } }
            },
            completionHandler: { _, _, error in outcome.fulfill(error) })
        let delegate = try #require(manager.core.delegate(for: task))
        // The file is made when the task runs (off the caller's thread), not when it is created.
        #expect(delegate.downloadFile?.url == nil)
        watched.withLock { $0 = delegate }
        task.resume()
        #expect((try await outcome.value() as? CourierError)?.errorCode == -1005)
        let temporary = try #require(delegate.downloadFile?.url)
        #expect(existedWhileDownloading.withLock { $0 }, "the body was written to \(temporary.path)")
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }
}
