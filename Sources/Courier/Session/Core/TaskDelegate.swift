import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task's configuration for the session that runs it (`AFURLSessionManagerTaskDelegate`): its serializer, upload
/// body, progress closures, completion, download destination and streamed body; and the few calls that change the
/// task's ``TaskState`` and report progress outside its lock. It is removed from the session's map when the task
/// completes.
///
/// It holds no state of its own: `state` is the task's, behind the task's one lock.
final class TaskDelegate: Sendable {
    let serializer: any ResponseSerializer
    let uploadBody: HTTPRequestBody?
    let uploadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let downloadProgressHandler: (@Sendable (TaskProgress) -> Void)?
    let completion: TaskCompletionHandler?
    /// Whether the completion runs on the session's completion queue, read when the task completes (the callback
    /// API); else where serialization ran (the `async` API's continuation needs no hop, and so never waits for the
    /// main queue).
    let hopsToCompletionQueue: Bool
    let destination: DownloadDestination?
    /// Whether a download whose response fails validation is still moved to its destination and handed over with
    /// the error (the callback API, as AFNetworking's); when `false` (the `async` download) its file is deleted and
    /// the destination is never touched, so an error page cannot replace a good file.
    let movesUnacceptableDownload: Bool
    /// `nil` for data and upload tasks, which move no file.
    let downloadOptions: DownloadOptions?
    /// Where a streamed body goes instead of ``receivedData`` (see ``sink``).
    private let stream: ChunkHandoff?
    /// The request's own interceptor, after the session's.
    let interceptor: (any RequestInterceptor)?
    /// The request's own hooks and credential (``TaskHooks``), in place of the session's; `nil` for none.
    let taskHooks: TaskHooks?
    /// The task's state, shared with it.
    let state: Locked<TaskState>
    /// Aborts the task's collected exchanges (see ``Transport/collect(_:cancellation:activity:)``) on a timeout or
    /// ``SessionTask/cancel()``.
    let exchange = ExchangeCancellation()
    /// The task's own monitors (``TaskHooks/eventMonitors``), told after the session's.
    let monitors: [SessionEventSink.Monitor]
    /// What the task's HTTPS requests present and are verified by instead of their policy's
    /// (``TaskHooks/serverTrust``, ``TaskHooks/clientCertificate``); the hook wrapped once, so that every request of
    /// the task carries the same one (connections are pooled by policy).
    let trustOverride: (hook: ServerTrustHook?, certificate: ClientCertificate?)?

    init(
        for task: SessionTask, serializer: any ResponseSerializer, uploadBody: HTTPRequestBody? = nil,
        uploadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TaskProgress) -> Void)? = nil, completion: TaskCompletionHandler? = nil,
        hopsToCompletionQueue: Bool, destination: DownloadDestination? = nil, downloadOptions: DownloadOptions? = nil,
        movesUnacceptableDownload: Bool = true, stream: ChunkHandoff? = nil,
        interceptor: (any RequestInterceptor)? = nil, taskHooks: TaskHooks? = nil
    ) {
        state = task.mutable
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
        self.taskHooks = taskHooks.flatMap { $0.isEmpty ? nil : $0 }
        monitors = SessionEventSink.Monitor.wrap(taskHooks?.eventMonitors ?? [])
        let hook = taskHooks?.serverTrust.map(ServerTrustHook.init)
        let certificate = taskHooks?.clientCertificate
        trustOverride = hook == nil && certificate == nil ? nil : (hook, certificate)
    }

    /// Applies ``trustOverride`` to an HTTPS request's policy.
    func overrideTrust(of request: inout TransportRequest) {
        guard let (hook, certificate) = trustOverride, URLCheck.isHTTPS(request.url) else { return }
        if let hook { request.securityPolicy.serverTrustHook = hook }
        if let certificate { request.securityPolicy.clientCertificate = certificate }
    }

    /// Notes that bytes moved, for the idle timeout.
    func touch() {
        state.withLock { $0.touch() }
    }

    /// Notes that the latest response's body has been read whole (or dropped): `received` bytes, ending now.
    func endTransaction(received: Int64) {
        let now = Date()
        state.withLock { $0.endLastTransaction(at: now, received: received) }
    }

    /// Whether a streamed chunk waits for a consumer that is behind (see ``ChunkHandoff/holdsUntakenChunk``); read
    /// without the task's lock.
    var consumerIsBehind: Bool { stream?.holdsUntakenChunk ?? false }

    /// Whether the body goes to a streaming consumer, which can fall behind without the task hearing of it.
    var streamsBody: Bool { stream != nil }

    func didSend(totalBytesSent: Int64) {
        report(
            state.withLock { $0.sent(total: totalBytesSent, watched: uploadProgressHandler != nil) },
            to: uploadProgressHandler)
    }

    /// Counts a chunk of the body, keeps it in memory or writes it to the download file (on ``BlockingIO``'s
    /// threads), and reports progress. A streamed body is not kept.
    func didReceive(_ chunk: Data, into sink: BodySink) async throws {
        var keep = sink.keepsInMemory
        if case .file(let file) = sink { keep = try await !file.write(chunk) }
        didReceive(chunk, keep: keep)
    }

    /// ``didReceive(_:into:)`` for a chunk already in memory that is kept or not (a cached response's is).
    func didReceive(_ chunk: Data, keep: Bool) {
        report(
            state.withLock { $0.received(chunk, keep: keep, watched: downloadProgressHandler != nil) },
            to: downloadProgressHandler)
    }

    /// Ends progress; after a success, first reports each direction's final value (fraction 1).
    func finishProgress(succeeded: Bool) {
        let (upload, download, streams) = state.withLock {
            $0.finishProgress(
                succeeded: succeeded, hadUpload: uploadBody != nil,
                watched: (uploadProgressHandler != nil, downloadProgressHandler != nil))
        }
        report(upload, to: uploadProgressHandler)
        report(download, to: downloadProgressHandler)
        streams.forEach { $0.finish() }
    }

    private func report(_ report: TaskState.ProgressReport?, to handler: (@Sendable (TaskProgress) -> Void)?) {
        guard let report else { return }
        handler?(report.progress)
        report.streams.forEach { $0.yield(report.progress) }
        if let live = report.live {
            live.totalUnitCount = report.progress.total
            live.completedUnitCount = report.progress.completed
        }
    }

    /// Where the body goes: to the streaming consumer, else to the download's file, else into memory
    /// (``receivedData``, for the serializer).
    var sink: BodySink {
        if let stream { return .stream(stream) }
        if let file = downloadFile, file.isDownload { return .file(file) }
        return .memory
    }

    /// The download's file, if the task has one.
    var downloadFile: DownloadFile? { state.withLock { $0.downloadFile } }

    /// The download's file, made on first use: most tasks never have one, and a file costs allocations per task.
    func makeDownloadFile() -> DownloadFile {
        state.withLock { state in
            if let file = state.downloadFile { return file }
            let file = DownloadFile(progressStarts: { [weak self] offset in
                self?.state.withLock { $0.startDownload(at: offset) }
            })
            state.downloadFile = file
            return file
        }
    }

    var receivedData: Data { state.withLock { $0.data } }
}
