import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``ImageDownloader``'s bookkeeping as a plain value: the downloads by URL with their callers' handlers, which
/// are running, and which wait for a slot. It decides; the downloader starts and cancels the tasks it names.
///
/// Invariants: at most `maximumActive` downloads are running (a cancelled one keeps its slot until its task has
/// ended, so the server never sees more); a download is registered under its key only while a caller waits for it;
/// a handler is handed out exactly once, by ``cancel(_:)`` or ``finish(_:)``.
struct ImageDownloadQueue<Handler: Sendable>: Sendable {
    /// One download and the callers waiting for it.
    struct Download: Sendable {
        let id: UUID
        let key: String
        let request: URLRequest
        var handlers: [(receiptID: UUID, handler: Handler)]
    }

    let maximumActive: Int
    let prioritization: ImageDownloadPrioritization
    private(set) var downloads: [String: Download] = [:]
    /// Keys of registered downloads waiting for a slot, the next to start first.
    private var waiting: [String] = []
    /// Downloads whose tasks are running, registered or not (a cancelled one runs until its task ends).
    private(set) var running: Set<UUID> = []

    init(maximumActive: Int, prioritization: ImageDownloadPrioritization) {
        self.maximumActive = max(1, maximumActive)
        self.prioritization = prioritization
    }

    /// Adds a caller for `request`: it joins the download already registered for `key`, or a new one, which is
    /// returned when it may start now.
    mutating func add(
        _ request: URLRequest, key: String, receiptID: UUID, handler: Handler
    ) -> Download? {
        if downloads[key] != nil {
            downloads[key]?.handlers.append((receiptID, handler))
            return nil
        }
        let download = Download(id: UUID(), key: key, request: request, handlers: [(receiptID, handler)])
        downloads[key] = download
        if running.count < maximumActive {
            running.insert(download.id)
            return download
        }
        switch prioritization {
        case .fifo: waiting.append(key)
        case .lifo: waiting.insert(key, at: 0)
        }
        return nil
    }

    /// What cancelling a receipt does.
    struct Cancellation {
        /// The cancelled caller's handler, to fail; `nil` when the receipt was unknown or already finished.
        var handler: Handler?
        /// The running download to stop, when no caller is left for it.
        var stop: UUID?
    }

    /// Takes the receipt's caller out. A download left with no caller is unregistered: a waiting one never
    /// starts, a running one is to be stopped.
    mutating func cancel(_ receipt: ImageDownloadReceipt) -> Cancellation {
        guard var download = downloads[receipt.key],
            let index = download.handlers.firstIndex(where: { $0.receiptID == receipt.receiptID })
        else { return Cancellation() }
        let handler = download.handlers.remove(at: index).handler
        guard download.handlers.isEmpty else {
            downloads[receipt.key] = download
            return Cancellation(handler: handler)
        }
        downloads[receipt.key] = nil
        if let position = waiting.firstIndex(of: receipt.key) {
            waiting.remove(at: position)
            return Cancellation(handler: handler)
        }
        return Cancellation(handler: handler, stop: running.contains(download.id) ? download.id : nil)
    }

    /// Whether some caller still waits for the download `id`.
    func isWanted(_ id: UUID, key: String) -> Bool {
        downloads[key]?.id == id
    }

    /// What a download's end does.
    struct Finish {
        /// The download's callers, in the order they asked; empty when every one was cancelled.
        var handlers: [Handler]
        /// Downloads that may start now, in the slot that freed up.
        var start: [Download]
    }

    /// The task of download `id` has ended: its slot frees up, and its callers are handed out if it is still
    /// registered.
    mutating func finish(_ id: UUID, key: String) -> Finish {
        var handlers: [Handler] = []
        if let download = downloads[key], download.id == id {
            downloads[key] = nil
            handlers = download.handlers.map(\.handler)
        }
        running.remove(id)
        var start: [Download] = []
        while running.count < maximumActive, !waiting.isEmpty {
            let key = waiting.removeFirst()
            guard let download = downloads[key] else { continue }
            running.insert(download.id)
            start.append(download)
        }
        return Finish(handlers: handlers, start: start)
    }
}
