import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension SessionManager {
    /// Downloads `request` into the file at `destination` and returns once it is there.
    ///
    /// The body is written to a temporary file as it arrives (constant memory). Once it has arrived, the response is
    /// validated with the manager's ``SessionManager/responseSerializer`` (its acceptable status codes), and only
    /// an acceptable one is moved to `destination`: for an unacceptable one (a 404's error page) the call throws,
    /// the temporary file is deleted, and whatever was at `destination` stays as it was. (The callback API,
    /// ``downloadTask(with:progress:destination:options:completionHandler:)``, moves the file and reports the
    /// error with it, as AFNetworking's does.)
    ///
    /// `options` default to none, as in every download call (AFNetworking's and Alamofire's default): the move fails
    /// with -3000 when `destination`'s folder is missing or a file is already there, unless `options` allow it.
    ///
    /// The call completes without the main queue, whatever ``completionQueue`` is. Cancelling the calling Swift task
    /// cancels the download and deletes the partial file; for a download that can be continued later, use
    /// ``downloadTask(with:progress:destination:options:completionHandler:)`` and
    /// ``DownloadTask/cancel(producingResumeData:)``.
    ///
    /// - Returns: the response, with `value` the file's URL (`data` is empty).
    /// - Throws: ``CourierError``: -1011 for an unacceptable status, with the response.
    public func download(
        _ request: URLRequest, to destination: URL,
        options: DownloadOptions = [],
        progress: (@Sendable (TaskProgress) -> Void)? = nil
    ) async throws -> DataResponse<URL> {
        try await awaitDownload(request: request) {
            makeDownloadTask(
                request: request, progress: progress, destination: { _, _ in destination }, options: options,
                completionHandler: nil, file: .success(.new), forAsyncCall: true)
        }
    }

    /// Continues the download `resumeData` describes into the file at `destination`; see
    /// ``download(_:to:options:progress:)`` (validation before the move, no main queue) and ``DownloadResumeData``.
    public func download(
        resumingWith resumeData: Data, to destination: URL,
        options: DownloadOptions = [],
        progress: (@Sendable (TaskProgress) -> Void)? = nil
    ) async throws -> DataResponse<URL> {
        let decoded = Result { try DownloadResumeData(data: resumeData) }
        let request = (try? decoded.get())?.makeRequest()
        return try await awaitDownload(request: request) {
            makeDownloadTask(
                request: request, progress: progress, destination: { _, _ in destination }, options: options,
                completionHandler: nil, file: decoded.map { .continuing($0) }, forAsyncCall: true)
        }
    }

    /// A download task, not yet resumed. The callback API's (`forAsyncCall` `false`) completes on the completion
    /// queue and moves an unacceptable response's file as AFNetworking's does; the `async` download's completes
    /// where the task finishes (no main queue needed) and never moves an unacceptable response's file.
    func makeDownloadTask(
        request: URLRequest?, progress: (@Sendable (TaskProgress) -> Void)?, destination: DownloadDestination?,
        options: DownloadOptions, completionHandler: TaskCompletionHandler?,
        file: Result<DownloadFile.Plan, any Error>, forAsyncCall: Bool = false
    ) -> DownloadTask {
        let task = DownloadTask(request: request, controller: core)
        let delegate = TaskDelegate(
            for: task, serializer: responseSerializer, downloadProgress: progress, completion: completionHandler,
            hopsToCompletionQueue: !forAsyncCall, destination: destination,
            downloadOptions: options, movesUnacceptableDownload: !forAsyncCall)
        // The file is opened when the task runs (see DownloadFile.plan): no file system call here.
        switch file {
        case .success(let plan):
            delegate.makeDownloadFile().plan(plan)
        case .failure(let error):
            core.register(task, delegate: delegate)
            core.complete(task, delegate: delegate, with: .failed(error))
            return task
        }
        core.register(task, delegate: delegate)
        return task
    }

    /// Runs a download task made by `make` for the `async` API, on the session's typed road
    /// (`SessionCore.runDownload`): no completion handler, continuation or completion queue.
    private func awaitDownload(request: URLRequest?, _ make: () -> DownloadTask) async throws -> DataResponse<URL> {
        let started = Date()
        let task = make()
        guard let delegate = core.delegate(for: task) else {
            // Completed as it was made (resume data that could not be read).
            throw task.error ?? CourierError.cancelled(context: CourierError.Context(request: request))
        }
        let url = try await core.runDownload(task, delegate: delegate)
        guard let head = task.head else {
            throw CourierError.badServerResponse(
                reason: "the download finished without a response", underlyingError: nil,
                context: CourierError.Context(request: request))
        }
        return DataResponse(
            task: task, head: head, data: Data(), value: url,
            metrics: DataResponse.Metrics(start: started, end: Date()))
    }
}

extension HTTPSessionManager {
    /// GETs `urlString` (relative to ``baseURL``) and returns as soon as the head has arrived, with the body to read
    /// as it arrives; see ``SessionManager/stream(_:acceptableStatusCodes:)``.
    public func stream(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
    ) async throws -> StreamedResponse {
        let request = try makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers)
        return try await stream(request, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// GETs `urlString` (relative to ``baseURL``) into the file at `destination`; see
    /// ``SessionManager/download(_:to:options:progress:)``.
    public func download(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        to destination: URL,
        options: DownloadOptions = [],
        progress: (@Sendable (TaskProgress) -> Void)? = nil
    ) async throws -> DataResponse<URL> {
        let request = try makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers)
        return try await download(request, to: destination, options: options, progress: progress)
    }
}
