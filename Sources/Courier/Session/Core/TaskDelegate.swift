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
        var upload = ProgressMeter()
        var download = ProgressMeter()
        var uploadStreams: [AsyncStream<TaskProgress>.Continuation] = []
        var downloadStreams: [AsyncStream<TaskProgress>.Continuation] = []
        /// The download's file: made for a download task, or when a response turns a task into one.
        var downloadFile: DownloadFile?
        var lastActivity = ContinuousClock.now
        var idleTimeout: Duration?
        var resourceDeadline: ContinuousClock.Instant?
        var timedOut = false
        /// The consumer of a streamed body has not asked for the next chunk: like a suspension, not idleness.
        var waitingForConsumer = false
        /// The task waits out a retrier's delay: the idle timeout measures silence from a server that was asked for
        /// something, so the backoff counts against the resource deadline only.
        var waitingToRetry = false
        /// When the task started, for its metrics.
        var startDate: Date?
        var redirectCount = 0
        /// Requests sent: the first, and one per redirect, answered challenge or restarted download.
        var exchangeCount = 0
        /// One per response: from the network, or the cache's.
        var transactions: [TransactionMetrics] = []

        /// Ends the latest transaction at `date` if nothing said when it ended (a body read or dropped by the
        /// session); `received`, when given, is its body's length.
        mutating func endLastTransaction(at date: Date, received: Int64? = nil) {
            guard let last = transactions.indices.last else { return }
            if transactions[last].responseEndDate == nil { transactions[last].responseEndDate = date }
            if let received, transactions[last].countOfResponseBodyBytesReceived == 0 {
                transactions[last].countOfResponseBodyBytesReceived = received
            }
        }
    }

    let serializer: any ResponseSerializer
    let uploadBody: HTTPRequestBody?
    let uploadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let downloadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let completion: TaskCompletionHandler?
    /// Whether the completion runs on the session's completion queue, read when the task completes (the callback
    /// API); else where serialization ran (the async API's continuation needs no hop, and so never waits for the
    /// main queue).
    let hopsToCompletionQueue: Bool
    let destination: DownloadDestination?
    /// Whether a download whose response fails validation is still moved to its destination and handed over with
    /// the error (the callback API, as AFNetworking's); when `false` (the `async` download) its file is deleted and
    /// the destination is never touched, so an error page cannot replace a good file.
    let movesUnacceptableDownload: Bool
    let downloadOptions: DownloadOptions
    /// Where a streamed body goes instead of ``receivedData``.
    let stream: ChunkHandoff?
    /// The request's own interceptor, after the session's.
    let interceptor: (any RequestInterceptor)?
    let state = Locked(State())
    /// Aborts the task's collected exchanges (see ``Transport/collect(_:cancellation:activity:)``) on a timeout or ``SessionTask/cancel()``.
    let exchange = ExchangeCancellation()

    init(
        serializer: any ResponseSerializer, uploadBody: HTTPRequestBody?,
        uploadProgress: (@Sendable (TaskProgress) -> Void)?, downloadProgress: (@Sendable (TaskProgress) -> Void)?,
        completion: TaskCompletionHandler?, hopsToCompletionQueue: Bool,
        destination: DownloadDestination? = nil, downloadOptions: DownloadOptions = [],
        movesUnacceptableDownload: Bool = true, stream: ChunkHandoff? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) {
        self.serializer = serializer
        self.uploadBody = uploadBody
        self.uploadProgressHandler = uploadProgress
        self.downloadProgressHandler = downloadProgress
        self.completion = completion
        self.hopsToCompletionQueue = hopsToCompletionQueue
        self.destination = destination
        self.downloadOptions = downloadOptions
        self.movesUnacceptableDownload = movesUnacceptableDownload
        self.stream = stream
        self.interceptor = interceptor
    }

    /// Records a response's transaction; the one before it ends now if it had not ended yet.
    func recordTransaction(_ metrics: TransactionMetrics) {
        let now = Date()
        state.withLock { state in
            state.endLastTransaction(at: now)
            state.transactions.append(metrics)
        }
    }

    /// Notes that the latest response's body has been read whole: `received` bytes.
    func endTransaction(received: Int64) {
        let now = Date()
        state.withLock { $0.endLastTransaction(at: now, received: received) }
    }

    /// Notes that bytes moved, for the idle timeout.
    func touch() {
        state.withLock { $0.lastActivity = .now }
    }

    func expectUpload(total: Int64) {
        state.withLock { $0.upload.expect(total: total) }
    }

    func didSend(totalBytesSent: Int64) {
        let (progress, streams) = state.withLock { state in
            state.lastActivity = .now
            return (state.upload.update(completed: totalBytesSent), state.uploadStreams)
        }
        guard let progress else { return }
        uploadProgressHandler?(progress)
        streams.forEach { $0.yield(progress) }
    }

    func expectDownload(total: Int64) {
        state.withLock { $0.download.expect(total: total) }
    }

    /// Appends a chunk to the body, or writes it to the download file (on ``BlockingIO``'s threads), and reports
    /// progress. A streamed body is not kept.
    func didReceive(_ chunk: Data) async throws {
        record(chunk, inFile: try await downloadFile?.write(chunk) ?? false)
    }

    /// ``didReceive(_:)`` for a body that is already in memory and never goes to a file (a cached response).
    func didReceiveInMemory(_ chunk: Data) {
        record(chunk, inFile: false)
    }

    private func record(_ chunk: Data, inFile: Bool) {
        let (progress, streams) = state.withLock { state in
            state.lastActivity = .now
            if !inFile, stream == nil {
                // A collected body arrives as one chunk: keep it rather than copy it into an empty buffer.
                if state.data.isEmpty { state.data = chunk } else { state.data.append(chunk) }
            }
            let completed = state.download.progress.completed + Int64(chunk.count)
            return (state.download.update(completed: completed), state.downloadStreams)
        }
        guard let progress else { return }
        downloadProgressHandler?(progress)
        streams.forEach { $0.yield(progress) }
    }

    var isDownload: Bool { downloadFile?.isDownload ?? false }

    /// Whether the body is kept in memory (``receivedData``, for the serializer): not streamed to a consumer, not
    /// written to a download's file.
    var keepsBodyInMemory: Bool { stream == nil && !isDownload }

    /// The download's file, if the task has one.
    var downloadFile: DownloadFile? { state.withLock { $0.downloadFile } }

    /// The download's file, made on first use: most tasks never have one, and a file costs allocations per task.
    func makeDownloadFile() -> DownloadFile {
        state.withLock { state in
            if let file = state.downloadFile { return file }
            let file = DownloadFile(progressStarts: { [weak self] offset in
                self?.state.withLock { $0.download.start(at: offset) }
            })
            state.downloadFile = file
            return file
        }
    }

    var receivedData: Data { state.withLock { $0.data } }

    var uploadProgress: TaskProgress { state.withLock { $0.upload.progress } }

    var downloadProgress: TaskProgress { state.withLock { $0.download.progress } }

    func progressStream(upload: Bool) -> AsyncStream<TaskProgress> {
        AsyncStream { continuation in
            state.withLock { state in
                if upload {
                    continuation.yield(state.upload.progress)
                    state.uploadStreams.append(continuation)
                } else {
                    continuation.yield(state.download.progress)
                    state.downloadStreams.append(continuation)
                }
            }
        }
    }

    /// Ends the progress streams; after a success, first reports each direction's final value (fraction 1).
    func finishProgress(succeeded: Bool) {
        let (upload, download, streams) = state.withLock { state in
            var upload: TaskProgress?
            var download: TaskProgress?
            if succeeded {
                if uploadBody != nil || state.upload.hasReported { upload = state.upload.finish() }
                download = state.download.finish()
            }
            defer {
                state.uploadStreams = []
                state.downloadStreams = []
            }
            return (upload, download, (state.uploadStreams, state.downloadStreams))
        }
        if let upload {
            uploadProgressHandler?(upload)
            streams.0.forEach { $0.yield(upload) }
        }
        if let download {
            downloadProgressHandler?(download)
            streams.1.forEach { $0.yield(download) }
        }
        (streams.0 + streams.1).forEach { $0.finish() }
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
