import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension SessionManager {
    /// An upload task sending a multipart request's streamed body, not yet resumed.
    public func uploadTask(
        with multipart: MultipartRequest, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> UploadTask {
        uploadTask(
            with: multipart.urlRequest, body: multipart.body, progress: progress, completionHandler: completionHandler)
    }
}
