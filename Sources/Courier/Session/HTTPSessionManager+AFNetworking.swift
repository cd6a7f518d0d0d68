import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking's `AFHTTPSessionManager` calls: a task per HTTP verb with `success` and `failure` blocks, built on the
/// session's tasks (``SessionManager/dataTask(with:uploadProgress:downloadProgress:completionHandler:)``) and
/// completed on ``SessionManager/completionQueue``.
extension HTTPSessionManager {
    /// A data task for the call, not yet resumed (`dataTaskWithHTTPMethod:…`). When the request cannot be built,
    /// `failure` is called with a `nil` task on the completion queue and the method returns `nil`.
    @discardableResult
    public func dataTask(
        method: String, urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        uploadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        callbackTask(success: success, failure: failure) {
            try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        } making: { request, completion in
            dataTask(
                with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                completionHandler: completion)
        }
    }

    /// A multipart POST (`POST:parameters:headers:constructingBodyWithBlock:progress:success:failure:`), resumed.
    ///
    /// `constructingBody` runs before this returns. When the request cannot be built (a bad URL, a file part that
    /// is not reachable…), `failure` is called with a `nil` task on the completion queue and the method returns
    /// `nil`, before anything is sent.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        constructingBody: (inout MultipartFormData) throws -> Void,
        progress: (@Sendable (TaskProgress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> UploadTask? {
        resumed(
            callbackTask(success: success, failure: failure) {
                try makeMultipartRequest(
                    urlString: urlString, parameters: parameters, headers: headers, constructingBody: constructingBody)
            } making: { multipart, completion in
                uploadTask(with: multipart, progress: progress, completionHandler: completion)
            })
    }

    /// GET; parameters go in the query.
    @discardableResult
    public func get(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        progress: (@Sendable (TaskProgress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "GET", urlString: urlString, parameters: parameters, headers: headers,
                downloadProgress: progress, success: success, failure: failure))
    }

    /// HEAD; `success` gets only the task, as the response has no body.
    @discardableResult
    public func head(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        success: (@Sendable (DataTask) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "HEAD", urlString: urlString, parameters: parameters, headers: headers,
                success: { task, _ in success?(task) }, failure: failure))
    }

    /// POST; parameters go in the body.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        progress: (@Sendable (TaskProgress) -> Void)? = nil,
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "POST", urlString: urlString, parameters: parameters, headers: headers,
                uploadProgress: progress, success: success, failure: failure))
    }

    /// PUT; parameters go in the body.
    @discardableResult
    public func put(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "PUT", urlString: urlString, parameters: parameters, headers: headers, success: success,
                failure: failure))
    }

    /// PATCH; parameters go in the body.
    @discardableResult
    public func patch(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "PATCH", urlString: urlString, parameters: parameters, headers: headers, success: success,
                failure: failure))
    }

    /// DELETE; parameters go in the query (see ``HTTPRequestSerializer/methodsEncodingParametersInURI``).
    @discardableResult
    public func delete(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)? = nil,
        failure: (@Sendable (DataTask?, any Error) -> Void)? = nil
    ) -> DataTask? {
        resumed(
            dataTask(
                method: "DELETE", urlString: urlString, parameters: parameters, headers: headers, success: success,
                failure: failure))
    }

    private func resumed<Task: DataTask>(_ task: Task?) -> Task? {
        task?.resume()
        return task
    }

    /// A task of AFNetworking's calls: its request built by `build`, then the task made by `make` with a completion
    /// handler that calls `success` or `failure`. When the request cannot be built, `failure` is called with a `nil`
    /// task on the completion queue and the result is `nil`.
    private func callbackTask<Request, Task: DataTask>(
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?, failure: (@Sendable (DataTask?, any Error) -> Void)?,
        building build: () throws -> Request, making make: (Request, @escaping TaskCompletionHandler) -> Task
    ) -> Task? {
        let request: Request
        do {
            request = try build()
        } catch {
            (completionQueue ?? .main).async { failure?(nil, error) }
            return nil
        }
        let callbacks = TaskCallbacks(success: success, failure: failure)
        return callbacks.attach(to: make(request, callbacks.completionHandler))
    }
}
