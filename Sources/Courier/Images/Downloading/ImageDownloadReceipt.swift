import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which waiting download starts when a slot frees up (AFNetworking's `AFImageDownloadPrioritization`).
public enum ImageDownloadPrioritization: Sendable, Hashable {
    /// The download asked for first (the default).
    case fifo
    /// The download asked for last: what was scrolled to most recently.
    case lifo
}

/// One caller's share of a download (AFNetworking's `AFImageDownloadReceipt`): pass it to
/// ``ImageDownloader/cancelTask(for:)`` to give up that share.
///
/// Calls for the same URL share one download, each with a receipt of its own.
public struct ImageDownloadReceipt: Sendable, Hashable {
    /// Tells this share from the others of the same download.
    public let receiptID: UUID
    /// The request this share asked for.
    public let request: URLRequest
    /// The key the download is merged under: the URL's absolute string.
    let key: String
}
