import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a finished download goes, given its temporary file and the response.
public typealias DownloadDestination = @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse?) -> URL

/// What to do about an existing file or missing folders when a download is moved to its destination.
public struct DownloadOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int

    /// Creates options from bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Create the destination's parent folders when they are missing.
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1 << 0)
    /// Replace a file already at the destination (otherwise the move fails).
    public static let removePreviousFile = DownloadOptions(rawValue: 1 << 1)
}
