import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task reports when it completes: the HTTP response, the serialized object (for downloads, the file's
/// URL) and the error, if any (`AFURLSessionManager`'s completion handler).
public typealias TaskCompletionHandler =
    @Sendable (_ response: HTTPURLResponse?, _ object: (any Sendable)?, _ error: (any Error)?) -> Void

/// Where a finished download goes, given its temporary file and the response.
public typealias DownloadDestination = @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse?) -> URL

/// The per-task bookkeeping a session keeps while the task runs (`AFURLSessionManagerTaskDelegate`): the body
/// received so far, progress, the serializer, and the completion handler. It is removed from the session's map
/// when the task completes.
///
/// `@unchecked Sendable`: everything mutable is in `state`, behind its lock.
final class TaskDelegate: @unchecked Sendable {
    struct State {
        var data = Data()
        var uploadProgress = TaskProgress(completed: 0, total: -1)
        var downloadProgress = TaskProgress(completed: 0, total: -1)
        var uploadStreams: [AsyncStream<TaskProgress>.Continuation] = []
        var downloadStreams: [AsyncStream<TaskProgress>.Continuation] = []
        var downloadFile: FileHandle?
        var downloadURL: URL?
        var lastActivity = ContinuousClock.now
        var idleTimeout: Duration?
        var resourceDeadline: ContinuousClock.Instant?
        var timedOut = false
    }

    let serializer: any ResponseSerializer
    let uploadBody: RequestBody?
    let uploadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let downloadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let completion: TaskCompletionHandler?
    /// `nil`: run the completion where serialization ran (the async API's continuation needs no hop).
    let completionQueue: DispatchQueue?
    let destination: DownloadDestination?
    let downloadOptions: DownloadOptions
    let state = Locked(State())

    init(
        serializer: any ResponseSerializer, uploadBody: RequestBody?,
        uploadProgress: (@Sendable (TaskProgress) -> Void)?, downloadProgress: (@Sendable (TaskProgress) -> Void)?,
        completion: TaskCompletionHandler?, completionQueue: DispatchQueue?,
        destination: DownloadDestination? = nil, downloadOptions: DownloadOptions = []
    ) {
        self.serializer = serializer
        self.uploadBody = uploadBody
        self.uploadProgressHandler = uploadProgress
        self.downloadProgressHandler = downloadProgress
        self.completion = completion
        self.completionQueue = completionQueue
        self.destination = destination
        self.downloadOptions = downloadOptions
    }

    /// Notes that bytes moved, for the idle timeout.
    func touch() {
        state.withLock { $0.lastActivity = .now }
    }

    func expectUpload(total: Int64) {
        state.withLock { $0.uploadProgress.total = total }
    }

    func didSend(totalBytesSent: Int64) {
        let (progress, streams) = state.withLock { state in
            state.lastActivity = .now
            state.uploadProgress.completed = totalBytesSent
            return (state.uploadProgress, state.uploadStreams)
        }
        uploadProgressHandler?(progress)
        streams.forEach { $0.yield(progress) }
    }

    func expectDownload(total: Int64) {
        state.withLock { $0.downloadProgress.total = total }
    }

    /// Appends a chunk to the body (or the download file) and reports progress.
    func didReceive(_ chunk: Data) throws {
        let (progress, streams) = try state.withLock { state in
            state.lastActivity = .now
            if let file = state.downloadFile {
                try file.write(contentsOf: chunk)
            } else {
                state.data.append(chunk)
            }
            state.downloadProgress.completed += Int64(chunk.count)
            return (state.downloadProgress, state.downloadStreams)
        }
        downloadProgressHandler?(progress)
        streams.forEach { $0.yield(progress) }
    }

    /// Starts writing the body to a new temporary file instead of memory.
    func beginDownloadFile() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("Courier-\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CourierError.fileOperationFailed(
                reason: "Could not create the download file \(url.path).", underlyingError: nil,
                context: CourierError.Context())
        }
        let handle = try FileHandle(forWritingTo: url)
        state.withLock { state in
            state.downloadFile = handle
            state.downloadURL = url
        }
    }

    /// Closes the download file and returns its URL.
    func finishDownloadFile() -> URL? {
        state.withLock { state in
            try? state.downloadFile?.close()
            state.downloadFile = nil
            return state.downloadURL
        }
    }

    /// Deletes the temporary download file, if it is still there.
    func removeDownloadFile() {
        if let url = finishDownloadFile() { try? FileManager.default.removeItem(at: url) }
    }

    var isDownload: Bool { state.withLock { $0.downloadURL != nil } }

    var receivedData: Data { state.withLock { $0.data } }

    var uploadProgress: TaskProgress { state.withLock { $0.uploadProgress } }

    var downloadProgress: TaskProgress { state.withLock { $0.downloadProgress } }

    func progressStream(upload: Bool) -> AsyncStream<TaskProgress> {
        AsyncStream { continuation in
            state.withLock { state in
                if upload {
                    continuation.yield(state.uploadProgress)
                    state.uploadStreams.append(continuation)
                } else {
                    continuation.yield(state.downloadProgress)
                    state.downloadStreams.append(continuation)
                }
            }
        }
    }

    /// Ends the progress streams.
    func finishProgress() {
        let streams = state.withLock { state in
            let all = state.uploadStreams + state.downloadStreams
            state.uploadStreams = []
            state.downloadStreams = []
            return all
        }
        streams.forEach { $0.finish() }
    }
}

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
