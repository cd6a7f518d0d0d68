import Dispatch
import Foundation
import NIOCore
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``ImageDownloader`` against ``ImageServer``, which counts requests, requests waiting at once and connections.
@Suite(.timeLimit(.minutes(1)))
struct ImageDownloaderTests {
    /// What the handlers of one test saw, in the order they ran (on one serial queue).
    final class Outcomes: Sendable {
        enum Outcome: Sendable, Equatable {
            case success(String, Image)
            case failure(String, Int)
        }

        let queue = DispatchQueue(label: "ImageDownloaderTests.callbacks")
        private let list = Locked<[Outcome]>([])

        var all: [Outcome] { list.withLock { $0 } }
        var successes: [String] {
            all.compactMap { if case .success(let name, _) = $0 { name } else { nil } }
        }
        func failures(code: Int) -> [String] {
            all.compactMap { if case .failure(let name, code) = $0 { name } else { nil } }
        }

        func success(_ name: String) -> @Sendable (URLRequest, HTTPURLResponse?, Image) -> Void {
            { [list] _, _, image in list.withLock { $0.append(.success(name, image)) } }
        }

        func failure(_ name: String) -> @Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void {
            { [list] _, _, error in
                list.withLock { $0.append(.failure(name, (error as? CourierError)?.errorCode ?? 0)) }
            }
        }

        func waitFor(_ count: Int) async throws {
            try await waitUntil(timeout: .seconds(20)) { self.all.count >= count }
        }
    }

    static func downloader(
        _ transport: String = "NIOTransport", maximumActiveDownloads: Int = 4,
        prioritization: ImageDownloadPrioritization = .fifo, cache: AutoPurgingImageCache? = AutoPurgingImageCache(),
        outcomes: Outcomes
    ) -> ImageDownloader {
        ImageDownloader(
            session: HTTPSessionManager(transport: TestTransports.make(transport)),
            downloadPrioritization: prioritization, maximumActiveDownloads: maximumActiveDownloads,
            imageCache: cache, callbackQueue: outcomes.queue)
    }

    func download(_ name: String, _ downloader: ImageDownloader, _ server: ImageServer, _ outcomes: Outcomes)
        -> ImageDownloadReceipt?
    {
        downloader.downloadImage(
            for: URLRequest(url: server.url(name)), success: outcomes.success(name), failure: outcomes.failure(name))
    }

    @Test("10 URLs never see more than 4 requests at once")
    func boundedConcurrency() async throws {
        // Answers are held, so the downloader fills its 4 slots however slowly the machine runs.
        let server = try await ImageServer.start(holding: true)
        let outcomes = Outcomes()
        let downloader = Self.downloader(outcomes: outcomes)
        for index in 0..<10 { #expect(download("image-\(index)", downloader, server, outcomes) != nil) }
        try await waitUntil { server.waitingCount == 4 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.waitingCount == 4)
        #expect(server.paths.count == 4)
        #expect(downloader.activeDownloadCount == 4)
        server.releaseAll()
        try await outcomes.waitFor(10)
        #expect(outcomes.successes.count == 10)
        #expect(server.maxWaitingCount == 4)
        #expect(Set(server.paths).count == 10)
        try await waitUntil { downloader.activeDownloadCount == 0 }
        try await server.stop()
    }

    @Test(arguments: [ImageDownloadPrioritization.fifo, .lifo])
    func oneAtATimeInPriorityOrder(_ prioritization: ImageDownloadPrioritization) async throws {
        let server = try await ImageServer.start(holding: true)
        let outcomes = Outcomes()
        let downloader = Self.downloader(maximumActiveDownloads: 1, prioritization: prioritization, outcomes: outcomes)
        let names = (1...5).map { "image-\($0)" }
        for name in names { _ = download(name, downloader, server, outcomes) }
        try await waitUntil { server.waitingCount == 1 }
        server.releaseAll()
        try await outcomes.waitFor(5)
        let expected = prioritization == .fifo ? names : [names[0]] + names.dropFirst().reversed()
        #expect(outcomes.successes == expected)
        #expect(server.paths == expected.map { "/" + $0 })
        #expect(server.maxWaitingCount == 1)
        try await server.stop()
    }

    @Test(arguments: TestTransports.names)
    func callsForOneURLShareOneDownload(transport: String) async throws {
        let server = try await ImageServer.start(holding: true)
        let outcomes = Outcomes()
        let downloader = Self.downloader(transport, outcomes: outcomes)
        let receipts = (1...5).map { _ in download("shared", downloader, server, outcomes) }
        #expect(Set(receipts.compactMap { $0?.receiptID }).count == 5)
        try await waitUntil { server.waitingCount == 1 }
        server.releaseAll()
        try await outcomes.waitFor(5)
        #expect(server.paths == ["/shared"])
        let images = outcomes.all.compactMap { if case .success(_, let image) = $0 { image } else { nil } }
        #expect(images.count == 5)
        #expect(Set(images).count == 1)
        #expect(images.first?.pixelWidth == 7)
        try await server.stop()
    }

    @Test("Cancelling one of two receipts fails that one only, with -999")
    func cancellingOneReceipt() async throws {
        let server = try await ImageServer.start(holding: true)
        let outcomes = Outcomes()
        let downloader = Self.downloader(outcomes: outcomes)
        let first = try #require(download("pair", downloader, server, outcomes))
        _ = download("pair", downloader, server, outcomes)
        try await waitUntil { server.waitingCount == 1 }
        downloader.cancelTask(for: first)
        try await outcomes.waitFor(1)
        #expect(outcomes.failures(code: -999) == ["pair"])
        server.releaseAll()
        try await outcomes.waitFor(2)
        #expect(outcomes.successes == ["pair"])
        // Cancelling a receipt that was already answered calls nothing.
        downloader.cancelTask(for: first)
        try await Task.sleep(for: .milliseconds(50))
        #expect(outcomes.all.count == 2)
        #expect(server.paths.count == 1)
        try await server.stop()
    }

    @Test(
        "Cancelling every receipt stops the download: the connection closes and nothing is cached",
        arguments: TestTransports.names)
    func cancellingEveryReceipt(transport: String) async throws {
        let server = try await ImageServer.start(holding: true)
        let outcomes = Outcomes()
        let cache = AutoPurgingImageCache()
        let downloader = Self.downloader(transport, cache: cache, outcomes: outcomes)
        let receipts = [download("gone", downloader, server, outcomes), download("gone", downloader, server, outcomes)]
        try await waitUntil { server.waitingCount == 1 && server.openConnectionCount == 1 }
        for receipt in receipts { downloader.cancelTask(for: try #require(receipt)) }
        try await outcomes.waitFor(2)
        #expect(outcomes.failures(code: -999) == ["gone", "gone"])
        try await waitUntil { server.openConnectionCount == 0 }
        try await waitUntil { downloader.activeDownloadCount == 0 }
        server.releaseAll()
        try await Task.sleep(for: .milliseconds(100))
        #expect(cache.count == 0)
        #expect(outcomes.all.count == 2)
        try await server.stop()
    }

    @Test("Cancel, then download again, 5 URLs past the active limit: all 5 succeed (AFNetworking #3324)")
    func cancelThenDownloadAgainPastTheLimit() async throws {
        let server = try await ImageServer.start(delay: .milliseconds(20))
        let outcomes = Outcomes()
        let downloader = Self.downloader(outcomes: outcomes)
        let names = (1...5).map { "again-\($0)" }
        for name in names {
            if let receipt = download(name, downloader, server, outcomes) { downloader.cancelTask(for: receipt) }
            #expect(download(name, downloader, server, outcomes) != nil)
        }
        try await outcomes.waitFor(10)
        #expect(outcomes.failures(code: -999).sorted() == names)
        #expect(outcomes.successes.sorted() == names)
        #expect(server.maxWaitingCount <= 4)
        try await waitUntil { downloader.activeDownloadCount == 0 }
        try await server.stop()
    }

    @Test("A memory-cache hit calls success at once and returns no receipt; a reloading policy skips the cache")
    func memoryCacheHit() async throws {
        let server = try await ImageServer.start()
        let outcomes = Outcomes()
        let downloader = Self.downloader(outcomes: outcomes)
        _ = download("cached", downloader, server, outcomes)
        try await outcomes.waitFor(1)
        let called = Locked(false)
        let receipt = downloader.downloadImage(
            for: URLRequest(url: server.url("cached")),
            success: { _, response, image in
                #expect(response == nil)
                #expect(image.pixelWidth == 7)
                called.withLock { $0 = true }
            })
        #expect(receipt == nil)
        #expect(called.withLock { $0 })
        var reload = URLRequest(url: server.url("cached"))
        reload.cachePolicy = .reloadIgnoringLocalCacheData
        #expect(downloader.downloadImage(for: reload, success: outcomes.success("reload")) != nil)
        try await outcomes.waitFor(2)
        #expect(server.paths == ["/cached", "/cached"])
        try await server.stop()
    }

    @Test("A request without a URL fails with -1000 and returns no receipt")
    func requestWithoutURL() async throws {
        let outcomes = Outcomes()
        let downloader = Self.downloader(outcomes: outcomes)
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.url = nil
        #expect(downloader.downloadImage(for: request, failure: outcomes.failure("none")) == nil)
        try await outcomes.waitFor(1)
        #expect(outcomes.failures(code: -1000) == ["none"])
        await #expect(throws: CourierError.self) { try await downloader.image(for: request) }
    }

    @Test("Bytes that are not an image fail with -1016 and the bytes attached")
    func notAnImage() async throws {
        let server = try await ImageServer.start()
        let downloader = Self.downloader(outcomes: Outcomes())
        let error = await thrownCourierError {
            _ = try await downloader.image(for: URLRequest(url: server.url("bad/x")))
        }
        #expect(error?.errorCode == -1016)
        #expect(error?.responseData == Data("not an image".utf8))
        #expect(error?.response?.statusCode == 200)
        try await server.stop()
    }

    @Test("image(for:): cancelling the Swift task cancels that caller's share only")
    func asyncShares() async throws {
        let server = try await ImageServer.start(holding: true)
        let downloader = Self.downloader(outcomes: Outcomes())
        let request = URLRequest(url: server.url("async"))
        let kept = Task { try await downloader.image(for: request) }
        let dropped = Task { try await downloader.image(for: request) }
        try await waitUntil { server.waitingCount == 1 }
        dropped.cancel()
        let error = await thrownCourierError { _ = try await dropped.value }
        #expect(error?.errorCode == -999)
        server.releaseAll()
        let image = try await kept.value
        #expect(image.pixelWidth == 6)
        #expect(server.paths == ["/async"])
        // Now from the memory cache: no request.
        #expect(try await downloader.image(for: request) == image)
        #expect(server.paths.count == 1)
        try await server.stop()
    }

    @Test("A Swift task cancelled before it asks fails at once and sends nothing")
    func asyncCancelledBeforeAsking() async throws {
        let server = try await ImageServer.start()
        let downloader = Self.downloader(outcomes: Outcomes())
        let request = URLRequest(url: server.url("early"))
        let task = Task {
            try? await Task.sleep(for: .seconds(10))
            return try await downloader.image(for: request)
        }
        task.cancel()
        let error = await thrownCourierError { _ = try await task.value }
        #expect(error?.errorCode == -999)
        #expect(downloader.activeDownloadCount == 0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(server.paths.isEmpty)
        try await server.stop()
    }
}
