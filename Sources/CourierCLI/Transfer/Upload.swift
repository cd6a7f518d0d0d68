import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a body that is not in `httpBody` (a multipart body streamed from files) with an upload task, drawing its
/// progress.
enum Upload {
    /// The response, its body and the HTTP version it came with; the manager's response serializer decides which
    /// statuses fail.
    ///
    /// The body is in a file when the manager's ``SessionHooks/didReceiveResponse`` answers
    /// ``ResponseDisposition/becomeDownload`` (as `courier` does, to keep memory bounded), else in memory.
    static func send(_ request: URLRequest, body: RequestBody, manager: SessionManager, bar: ProgressBar)
        async throws -> (HTTPURLResponse, UploadedBody, String?)
    {
        let completion = LockedValue<CheckedContinuation<(HTTPURLResponse, UploadedBody), any Error>?>(nil)
        let finish: @Sendable (Result<(HTTPURLResponse, UploadedBody), any Error>) -> Void = { result in
            let continuation = completion.withLock { state in
                defer { state = nil }
                return state
            }
            continuation?.resume(with: result)
        }
        let task = manager.uploadTask(
            with: request, body: body, progress: { bar.update($0) },
            completionHandler: { response, object, error in
                if let error {
                    bar.abandon()
                    finish(.failure(error))
                } else if let response, let file = object as? URL {
                    bar.finish()
                    // Opened before the handler returns, when the library deletes the file.
                    do {
                        finish(.success((response, .file(try FileHandle(forReadingFrom: file)))))
                    } catch {
                        finish(
                            .failure(
                                CommandFailure(.failure, "cannot read the response kept in \(file.path): \(error)")))
                    }
                } else if let response {
                    bar.finish()
                    finish(.success((response, .data((object as? Data) ?? Data()))))
                } else {
                    finish(
                        .failure(
                            CourierError.badServerResponse(
                                reason: "no response", underlyingError: nil, context: .init(request: request))))
                }
            })
        let (response, uploaded) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                completion.withLock { $0 = continuation }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return (response, uploaded, task.httpVersion)
    }
}
