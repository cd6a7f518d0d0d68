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
        var downloadFile: FileHandle?
        var downloadURL: URL?
        /// The file a download task will write, opened by ``openDownloadFile()`` when the task starts running.
        var plannedDownloadFile: DownloadFilePlan?
        /// Bytes in the download file, including those a resumed download started with.
        var downloadFileLength: Int64 = 0
        /// Where a resumed download continues; 0 once it starts over.
        var resumeOffset: Int64 = 0
        /// Set by ``DownloadTask/cancel(producingResumeData:)``: keep the partial file and describe it.
        var resumeDataHandler: (@Sendable (Data?) -> Void)?
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

    /// Appends a chunk to the body, or writes it to the download file (on ``BlockingIO``'s threads and outside the
    /// lock), and reports progress. A streamed body is not kept.
    func didReceive(_ chunk: Data) async throws {
        if let file = state.withLock({ $0.downloadFile }) {
            try await BlockingIO.run { try file.write(contentsOf: chunk) }
        }
        record(chunk)
    }

    /// ``didReceive(_:)`` for a body that is already in memory and never goes to a file (a cached response).
    func didReceiveInMemory(_ chunk: Data) {
        record(chunk)
    }

    private func record(_ chunk: Data) {
        let (progress, streams) = state.withLock { state in
            state.lastActivity = .now
            if state.downloadFile != nil {
                state.downloadFileLength += Int64(chunk.count)
            } else if stream == nil {
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

    /// The file a download task writes its body to.
    enum DownloadFilePlan: Sendable {
        /// A new temporary file (``beginDownloadFile()``).
        case new
        /// The partial file of resume data (``continueDownloadFile(_:)``).
        case continuing(DownloadResumeData)
    }

    /// Notes which file the download will write. Nothing is opened yet: creating a task must not block its caller
    /// (often a thread of Swift's cooperative pool) on the file system, so ``openDownloadFile()`` opens it when the
    /// task runs. Progress already counts the bytes a resumed download starts with, as once the file is open.
    func planDownloadFile(_ plan: DownloadFilePlan) {
        state.withLock { state in
            state.plannedDownloadFile = plan
            if case .continuing(let resumeData) = plan, resumeData.bytesOnDisk >= 0 {
                state.download.start(at: resumeData.bytesOnDisk)
            }
        }
    }

    /// Opens the file ``planDownloadFile(_:)`` noted, if any, on ``BlockingIO``'s threads. The work finishes even
    /// when the task is cancelled meanwhile, so the file is then abandoned (deleted, or kept for resume data) as a
    /// file opened earlier would be.
    ///
    /// - Returns: `false` when resume data named a partial file that cannot be continued, so the download starts
    ///   over in a new file and its request must not ask for a range; `true` otherwise.
    func openDownloadFile() async throws -> Bool {
        switch state.withLock({ $0.plannedDownloadFile }) {
        case nil: return true
        case .new:
            try await beginDownloadFile()
            return true
        case .continuing(let resumeData): return try await continueDownloadFile(resumeData) > 0
        }
    }

    /// Starts writing the body to a new temporary file (mode 0600, in ``TemporaryFiles``) instead of memory; the
    /// file is made on ``BlockingIO``'s threads.
    func beginDownloadFile() async throws {
        do {
            let (url, handle) = try await BlockingIO.runToCompletion { try TemporaryFiles.makeFile(prefix: "Courier") }
            state.withLock { state in
                state.plannedDownloadFile = nil
                state.downloadFile = handle
                state.downloadURL = url
                state.downloadFileLength = 0
            }
        } catch {
            state.withLock { $0.plannedDownloadFile = nil }
            throw error
        }
    }

    /// What ``continueDownloadFile(_:)`` found on disk.
    private enum PartialFile: Sendable {
        /// The partial file, open and cut to the resume data's length, positioned at its end.
        case continued(FileHandle)
        /// Resume data naming a file that is not Courier's, or one missing or shorter than it says (then deleted).
        case unusable
    }

    /// Continues writing the partial file of `resumeData`; returns the bytes kept (0 when the file is missing or
    /// shorter than the resume data says, in which case the download starts over in a new file). Every file
    /// system call runs on ``BlockingIO``'s threads.
    func continueDownloadFile(_ resumeData: DownloadResumeData) async throws -> Int64 {
        let found: PartialFile
        do {
            found = try await BlockingIO.runToCompletion { try Self.openPartialFile(resumeData) }
        } catch {
            state.withLock { $0.plannedDownloadFile = nil }  // as a file that failed to open was never noted
            throw error
        }
        guard case .continued(let handle) = found else {
            state.withLock { $0.download.start(at: 0) }
            try await beginDownloadFile()
            return 0
        }
        state.withLock { state in
            state.plannedDownloadFile = nil
            state.downloadFile = handle
            state.downloadURL = resumeData.temporaryFileURL
            state.downloadFileLength = resumeData.bytesOnDisk
            state.resumeOffset = resumeData.bytesOnDisk
            state.download.start(at: resumeData.bytesOnDisk)
        }
        return resumeData.bytesOnDisk
    }

    /// Opens the partial file of `resumeData` for appending; blocking, so called on ``BlockingIO``'s threads.
    private static func openPartialFile(_ resumeData: DownloadResumeData) throws -> PartialFile {
        let url = resumeData.temporaryFileURL
        // Resume data is only bytes: it may name any file. Only Courier's own temporary files are continued (and
        // truncated), never a file elsewhere.
        guard TemporaryFiles.isOwnFile(url) else { return .unusable }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        // Resume data may come from anywhere: a negative offset must start over, not trap below.
        guard let size, resumeData.bytesOnDisk >= 0, size >= resumeData.bytesOnDisk,
            let handle = try? FileHandle(forWritingTo: url)
        else {
            try? FileManager.default.removeItem(at: url)
            return .unusable
        }
        try handle.truncate(atOffset: UInt64(resumeData.bytesOnDisk))
        try handle.seek(toOffset: UInt64(resumeData.bytesOnDisk))
        return .continued(handle)
    }

    /// Empties the download file: the server sent the whole resource instead of the rest of it.
    func restartDownloadFile() async throws {
        if let file = state.withLock({ $0.downloadFile }) {
            try await BlockingIO.run {
                try file.truncate(atOffset: 0)
                try file.seek(toOffset: 0)
            }
        }
        state.withLock { state in
            state.downloadFileLength = 0
            state.resumeOffset = 0
            state.download.start(at: 0)
        }
    }

    /// Closes the download file (outside the lock) and returns its URL.
    func finishDownloadFile() -> URL? {
        let (file, url) = state.withLock { state in
            defer { state.downloadFile = nil }
            return (state.downloadFile, state.downloadURL)
        }
        try? file?.close()
        return url
    }

    /// Keeps the partial file when resume data was asked for and can be made; otherwise deletes it. Calls the
    /// resume-data handler, if any, exactly once.
    func abandonDownloadFile(request: URLRequest?, response: HTTPURLResponse?) {
        let (handler, length, planned) = state.withLock { state in
            defer {
                state.resumeDataHandler = nil
                state.plannedDownloadFile = nil
            }
            return (state.resumeDataHandler, state.downloadFileLength, state.plannedDownloadFile)
        }
        guard let url = finishDownloadFile() else {
            // Never opened (the task did not run): a resumed download's partial file goes as an opened one would,
            // since without a response there is no resume data to keep it for.
            if case .continuing(let resumeData) = planned, TemporaryFiles.isOwnFile(resumeData.temporaryFileURL) {
                try? FileManager.default.removeItem(at: resumeData.temporaryFileURL)
            }
            handler?(nil)
            return
        }
        let resumeData =
            handler == nil
            ? nil : DownloadResumeData.make(request: request, response: response, file: url, bytesOnDisk: length)
        if resumeData == nil { try? FileManager.default.removeItem(at: url) }
        handler?(resumeData?.encoded())
    }

    /// Asks for resume data when the task ends by cancellation; `false` if the task is not a download.
    func wantResumeData(_ handler: @escaping @Sendable (Data?) -> Void) -> Bool {
        state.withLock { state in
            guard state.downloadURL != nil || state.plannedDownloadFile != nil, state.resumeDataHandler == nil else {
                return false
            }
            state.resumeDataHandler = handler
            return true
        }
    }

    /// Calls a pending resume-data handler with `nil`: the download finished after all.
    func dropResumeDataRequest() {
        state.withLock { state in
            defer { state.resumeDataHandler = nil }
            return state.resumeDataHandler
        }?(nil)
    }

    /// Deletes the temporary download file, if it is still there.
    func removeDownloadFile() {
        if let url = finishDownloadFile() { try? FileManager.default.removeItem(at: url) }
    }

    var isDownload: Bool { state.withLock { $0.downloadURL != nil || $0.plannedDownloadFile != nil } }

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
