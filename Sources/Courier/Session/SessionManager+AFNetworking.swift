import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking's `AFURLSessionManager` calls: tasks made suspended, with progress closures and a completion handler
/// run on ``completionQueue``, and the progress of a task read by asking. They are built on the session's core, as
/// the `async` API is; the `async` API observes progress through ``uploadProgressUpdates(for:)`` and
/// ``downloadProgressUpdates(for:)`` instead.
extension SessionManager {
    /// A data task for `request`, not yet resumed.
    public func dataTask(
        with request: URLRequest,
        uploadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> DataTask {
        register(DataTask(request: request, controller: core), nil, uploadProgress, downloadProgress, completionHandler)
    }

    /// An upload task sending `data` as the body, not yet resumed.
    public func uploadTask(
        with request: URLRequest, from data: Data, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> UploadTask {
        uploadTask(with: request, body: .data(data), progress: progress, completionHandler: completionHandler)
    }

    /// An upload task streaming the file at `fileURL` as the body with its exact `Content-Length`, not yet resumed.
    /// A missing file completes the task with ``CourierError/fileOperationFailed(reason:underlyingError:context:)``.
    public func uploadTask(
        with request: URLRequest, fromFile fileURL: URL, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> UploadTask {
        let body: HTTPRequestBody
        do {
            body = try HTTPRequestBody.file(fileURL)
        } catch {
            let failure = CourierError.fileOperationFailed(
                reason: "File URL not reachable.", underlyingError: error,
                context: CourierError.Context(request: request))
            body = HTTPRequestBody(length: nil, isReplayable: false) { throw failure }
        }
        return uploadTask(with: request, body: body, progress: progress, completionHandler: completionHandler)
    }

    /// An upload task sending `body` (data, a file or a stream), not yet resumed. A body of unknown length is sent
    /// chunked.
    public func uploadTask(
        with request: URLRequest, body: HTTPRequestBody, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> UploadTask {
        register(UploadTask(request: request, controller: core), body, progress, nil, completionHandler)
    }

    /// A download task writing the body to a temporary file, then moving it to `destination`, not yet resumed.
    /// The completion's object is the file's final URL. Without a destination the temporary file is deleted
    /// after the completion handler returns.
    public func downloadTask(
        with request: URLRequest, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        destination: DownloadDestination? = nil, options: DownloadOptions = [],
        completionHandler: TaskCompletionHandler?
    ) -> DownloadTask {
        makeDownloadTask(
            request: request, progress: progress, destination: destination, options: options,
            completionHandler: completionHandler, file: .success(.new))
    }

    /// A download task that continues the download `resumeData` describes, not yet resumed (see
    /// ``DownloadResumeData``). Data that is not resume data completes the task with
    /// ``CourierError/fileOperationFailed(reason:underlyingError:context:)``.
    public func downloadTask(
        withResumeData resumeData: Data, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        destination: DownloadDestination? = nil, options: DownloadOptions = [],
        completionHandler: TaskCompletionHandler?
    ) -> DownloadTask {
        let decoded = Result { try DownloadResumeData(data: resumeData) }
        let request = (try? decoded.get())?.makeRequest()
        return makeDownloadTask(
            request: request, progress: progress, destination: destination, options: options,
            completionHandler: completionHandler, file: decoded.map { .continuing($0) })
    }

    /// Registers a task of the callback API with its delegate, and returns it.
    fileprivate func register<Task: SessionTask>(
        _ task: Task, _ uploadBody: HTTPRequestBody?, _ uploadProgress: (@Sendable (TaskProgress) -> Void)?,
        _ downloadProgress: (@Sendable (TaskProgress) -> Void)?, _ completionHandler: TaskCompletionHandler?
    ) -> Task {
        let delegate = TaskDelegate(
            for: task, serializer: responseSerializer, uploadBody: uploadBody, uploadProgress: uploadProgress,
            downloadProgress: downloadProgress, completion: completionHandler, hopsToCompletionQueue: true)
        // Before the task is registered, so its created event shows it.
        if task.taskDescription == nil { task.taskDescription = taskDescriptionForSessionTasks }
        core.register(task, delegate: delegate)
        return task
    }

    /// The description every task this manager's factories make starts with (AFNetworking's
    /// `taskDescriptionForSessionTasks`): unique to the manager while it lives, so an observer of the notifications
    /// can tell its tasks from another manager's (`task.taskDescription == manager.taskDescriptionForSessionTasks`).
    /// A task's own ``SessionTask/taskDescription`` may be set to something else afterwards.
    public var taskDescriptionForSessionTasks: String {
        "Courier.SessionManager." + String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
    }

    /// The task's upload progress, while it runs (`uploadProgressForTask:`): the latest value of what
    /// ``uploadProgressUpdates(for:)`` streams and the task's `uploadProgress` closure is handed.
    public func uploadProgress(for task: SessionTask) -> TaskProgress? {
        core.delegate(for: task)?.state.withLock { $0.upload.progress }
    }

    /// The task's download progress, while it runs (`downloadProgressForTask:`): the latest value of what
    /// ``downloadProgressUpdates(for:)`` streams and the task's `downloadProgress` closure is handed.
    public func downloadProgress(for task: SessionTask) -> TaskProgress? {
        core.delegate(for: task)?.state.withLock { $0.download.progress }
    }
}
