import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads images, merging requests for the same URL, with a bounded number running at once, decoding off the
/// network threads and keeping the results in a memory cache (AFNetworking's `AFImageDownloader`).
///
/// ```swift
/// let downloader = ImageDownloader.shared
/// let image = try await downloader.image(for: URLRequest(url: avatarURL))
/// show(image)
///
/// let receipt = downloader.downloadImage(for: request, success: { _, _, image in show(image) })
/// if let receipt { downloader.cancelTask(for: receipt) }  // that caller gives up; others keep their share
/// ```
///
/// What it does, as AFNetworking does it:
/// - Calls for one URL (its absolute string) while it is queued or running share one download; each caller gets a
///   receipt and is called once, in the order they asked.
/// - A memory-cache hit (for requests whose cache policy allows one) calls `success` before returning, and returns
///   `nil`: there is nothing to cancel.
/// - No more than ``maximumActiveDownloads`` run at once; the others wait, started oldest first (``ImageDownloadPrioritization/fifo``)
///   or newest first (``ImageDownloadPrioritization/lifo``).
/// - Cancelling a receipt fails only that caller, with ``CourierError/cancelled(context:)`` (-999). When no caller
///   is left, a waiting download never starts and a running one is stopped: its connection is closed, nothing is
///   cached, and its slot frees up only when it has stopped.
/// - A request without a URL fails with ``CourierError/invalidURL(_:)`` (-1000) and returns `nil`.
///
/// Beyond AFNetworking: images are decoded by ``decoder`` on a bounded queue of dispatch threads (at most
/// ``maximumConcurrentDecodes`` at once), a bad image fails with -1016 and the bytes attached, and ``image(for:)``
/// is the `async` form, whose Swift task's cancellation cancels that caller's share.
///
/// Handlers run on ``callbackQueue`` (the main queue by default, as AFNetworking's), except a memory-cache hit's,
/// which runs at once on the calling thread.
public final class ImageDownloader: Sendable {
    /// A caller waiting for an image: delivers the outcome where that caller wants it.
    typealias Handler = @Sendable (Result<(HTTPURLResponse?, Image), any Error>) -> Void

    /// The shared downloader, with the default session and cache.
    public static let shared = ImageDownloader()

    /// The session downloads go through: its security policy, cookies, headers and `URLCache` apply.
    public let session: HTTPSessionManager
    /// Where decoded images are kept; `nil` keeps none.
    public let imageCache: (any ImageRequestCache)?
    /// Which waiting download starts next.
    public let downloadPrioritization: ImageDownloadPrioritization
    /// How many downloads run at once.
    public let maximumActiveDownloads: Int
    /// Turns bytes into images.
    public let decoder: any ImageDecoding
    /// How many images are decoded at once.
    public var maximumConcurrentDecodes: Int { decodingQueue.width }
    /// Where `success` and `failure` run.
    public let callbackQueue: DispatchQueue

    private struct State {
        var queue: ImageDownloadQueue<Handler>
        var tasks: [UUID: Task<Void, Never>] = [:]
    }

    private let state: Locked<State>
    private let decodingQueue: ImageDecodingQueue

    /// A downloader.
    ///
    /// - Parameters:
    ///   - session: default: a new session whose `URLCache` holds 20 MiB in memory and 150 MiB on disk (in the
    ///     user's caches directory, `com.courier.imagedownloader`), AFNetworking's sizes.
    ///   - downloadPrioritization: default ``ImageDownloadPrioritization/fifo``.
    ///   - maximumActiveDownloads: default 4; at least 1.
    ///   - imageCache: default a new ``AutoPurgingImageCache`` (100 MiB, 60 MiB after a purge).
    ///   - decoder: default ``ImageHeaderDecoder`` (no pixels); `CourierImageDecoding`'s `SystemImageDecoder`
    ///     decodes PNG and JPEG.
    ///   - maximumConcurrentDecodes: default 2; at least 1.
    ///   - callbackQueue: default the main queue.
    public init(
        session: HTTPSessionManager = ImageDownloader.defaultSession(),
        downloadPrioritization: ImageDownloadPrioritization = .fifo,
        maximumActiveDownloads: Int = 4,
        imageCache: (any ImageRequestCache)? = AutoPurgingImageCache(),
        decoder: any ImageDecoding = ImageHeaderDecoder(),
        maximumConcurrentDecodes: Int = 2,
        callbackQueue: DispatchQueue = .main
    ) {
        self.session = session
        self.imageCache = imageCache
        self.downloadPrioritization = downloadPrioritization
        self.maximumActiveDownloads = max(1, maximumActiveDownloads)
        self.decoder = decoder
        self.callbackQueue = callbackQueue
        decodingQueue = ImageDecodingQueue(width: maximumConcurrentDecodes)
        state = Locked(
            State(
                queue: ImageDownloadQueue(maximumActive: maximumActiveDownloads, prioritization: downloadPrioritization)
            )
        )
    }

    /// A session for images: a `URLCache` of 20 MiB in memory and 150 MiB on disk.
    public static func defaultSession() -> HTTPSessionManager {
        var configuration = SessionConfiguration.default
        configuration.urlCache = defaultURLCache()
        return HTTPSessionManager(configuration: configuration)
    }

    /// AFNetworking's image cache sizes: 20 MiB in memory, 150 MiB on disk in the user's caches directory.
    public static func defaultURLCache() -> URLCache {
        let directory = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first?
            .appendingPathComponent("com.courier.imagedownloader", isDirectory: true)
        #if canImport(FoundationNetworking)
            // swift-corelibs-foundation has only the path form; Apple's deprecates it.
            return URLCache(
                memoryCapacity: 20 * 1024 * 1024, diskCapacity: 150 * 1024 * 1024, diskPath: directory?.path)
        #else
            return URLCache(memoryCapacity: 20 * 1024 * 1024, diskCapacity: 150 * 1024 * 1024, directory: directory)
        #endif
    }

    /// The number of downloads running now (a stopped one counts until it has ended).
    public var activeDownloadCount: Int { state.withLock { $0.queue.running.count } }

    /// Downloads the image for `request`, or takes it from the memory cache.
    ///
    /// - Returns: the receipt to cancel this caller's share with; `nil` when the image came from the cache (and
    ///   `success` has run) or the request has no URL (and `failure` will run).
    @discardableResult
    public func downloadImage(
        for request: URLRequest, withReceiptID receiptID: UUID = UUID(),
        success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)? = nil,
        failure: (@Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void)? = nil
    ) -> ImageDownloadReceipt? {
        let callbackQueue = callbackQueue
        if request.url == nil {
            callbackQueue.async { failure?(request, nil, CourierError.invalidURL(request.description)) }
            return nil
        }
        if let cached = cachedImage(for: request) {
            success?(request, nil, cached)
            return nil
        }
        return enqueue(request, receiptID: receiptID) { result in
            callbackQueue.async {
                switch result {
                case .success(let (response, image)): success?(request, response, image)
                case .failure(let error): failure?(request, (error as? CourierError)?.response, error)
                }
            }
        }
    }

    /// The image for `request`: from the memory cache, or a share of its download. Cancelling the calling task
    /// cancels this share only.
    ///
    /// - Throws: ``CourierError``: -1000 for a request without a URL, -999 when cancelled, -1016 for bytes that are
    ///   not an image, and the session's errors.
    public func image(for request: URLRequest) async throws -> Image {
        guard request.url != nil else { throw CourierError.invalidURL(request.description) }
        if let cached = cachedImage(for: request) { return cached }
        guard !Task.isCancelled else { throw CourierError.cancelled(context: .init(request: request)) }
        let receiptID = UUID()
        // The cancellation handler may run before the receipt exists, or while it is made.
        let share = Locked<(receipt: ImageDownloadReceipt?, cancelled: Bool)>((nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let receipt = enqueue(request, receiptID: receiptID) { result in
                    continuation.resume(with: result.map(\.1))
                }
                let cancelled = share.withLock { share -> Bool in
                    share.receipt = receipt
                    return share.cancelled
                }
                if cancelled { cancelTask(for: receipt) }
            }
        } onCancel: {
            let receipt = share.withLock { share -> ImageDownloadReceipt? in
                share.cancelled = true
                return share.receipt
            }
            if let receipt { cancelTask(for: receipt) }
        }
    }

    /// Gives up `receipt`'s share: its caller fails with -999 (unless it has already been called). When no caller
    /// is left, the download does not start or is stopped.
    public func cancelTask(for receipt: ImageDownloadReceipt) {
        let (cancellation, task) = state.withLock { state in
            let cancellation = state.queue.cancel(receipt)
            return (cancellation, cancellation.stop.flatMap { state.tasks[$0] })
        }
        task?.cancel()
        cancellation.handler?(.failure(CourierError.cancelled(context: .init(request: receipt.request))))
    }

    /// The memory cache's image for `request`, when its cache policy lets the cache answer.
    private func cachedImage(for request: URLRequest) -> Image? {
        switch request.cachePolicy {
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return imageCache?.image(for: request, withAdditionalIdentifier: nil)
        default:
            return nil
        }
    }

    /// Registers a caller, starting a download when one may start.
    private func enqueue(_ request: URLRequest, receiptID: UUID, handler: @escaping Handler) -> ImageDownloadReceipt {
        let key = request.url?.absoluteString ?? ""
        state.withLock { state in
            if let download = state.queue.add(request, key: key, receiptID: receiptID, handler: handler) {
                start(download, in: &state)
            }
        }
        return ImageDownloadReceipt(receiptID: receiptID, request: request, key: key)
    }

    /// Starts the task of `download`; called with the state locked, so the task is recorded before it can end.
    private func start(_ download: ImageDownloadQueue<Handler>.Download, in state: inout State) {
        state.tasks[download.id] = Task { [self] in
            let outcome = await fetch(download)
            finish(download, with: outcome)
        }
    }

    /// Downloads, validates and decodes one image.
    private func fetch(_ download: ImageDownloadQueue<Handler>.Download) async -> Result<
        (HTTPURLResponse?, Image), any Error
    > {
        do {
            let response = try await session.send(download.request, serializer: ImageResponseSerializer())
            let context = CourierError.Context(
                request: response.request, response: response.response, data: response.data)
            guard let imageData = response.value else {
                throw CourierError.responseSerializationFailed(
                    reason: "The response has no body.", context: context, underlyingError: nil)
            }
            let decoder = decoder
            let wanted: @Sendable () -> Bool = { [self] in
                state.withLock { $0.queue.isWanted(download.id, key: download.key) }
            }
            let image = try await decodingQueue.run { () throws -> Image? in
                guard wanted() else { return nil }
                do {
                    return try decoder.decode(imageData)
                } catch {
                    throw CourierError.responseSerializationFailed(
                        reason: "The image could not be decoded: \(error)", context: context, underlyingError: error)
                }
            }
            guard let image else { throw CourierError.cancelled(context: .init(request: download.request)) }
            return .success((response.response, image))
        } catch {
            return .failure(error)
        }
    }

    /// Ends `download`: caches the image when a caller still waits, hands the outcome to the callers, and starts
    /// what may start.
    private func finish(
        _ download: ImageDownloadQueue<Handler>.Download, with outcome: Result<(HTTPURLResponse?, Image), any Error>
    ) {
        // The callers are handed the outcome before the next download starts, still under the lock: otherwise the
        // next one could end, and queue its callbacks, first (seen under load: image-3's success before image-2's
        // with one download at a time). A handler only queues work (`callbackQueue.async`, a continuation), and the
        // image cache never calls back into the downloader, so neither can deadlock here.
        state.withLock { state in
            state.tasks[download.id] = nil
            let finish = state.queue.finish(download.id, key: download.key)
            if !finish.handlers.isEmpty, case .success(let (_, image)) = outcome, let imageCache,
                imageCache.shouldCache(image, for: download.request, withAdditionalIdentifier: nil)
            {
                imageCache.add(image, for: download.request, withAdditionalIdentifier: nil)
            }
            finish.handlers.forEach { $0(outcome) }
            for next in finish.start { start(next, in: &state) }
        }
    }
}
