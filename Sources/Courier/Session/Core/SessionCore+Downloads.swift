import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A finished download's file: validated, then moved where the hook or the task's destination says, or handed over
/// in place.
extension SessionCore {
    /// The download's outcome (AFNetworking's order: the file is moved, then the task completes): the file's URL (at
    /// its destination, or the temporary one without a destination) and the error, if any.
    func finishDownload(_ task: SessionTask, delegate: TaskDelegate, temporaryURL: URL) async -> TaskOutcome {
        let response = task.response
        // Validated before anything is moved: the `async` download's promise is that an unacceptable response (an
        // error page) never replaces the file at its destination.
        let unacceptable: (any Error)?
        do {
            try (delegate.serializer as? any ResponseValidating)?.validate(head: task.head, data: nil)
            unacceptable = nil
        } catch {
            unacceptable = error
        }
        if let unacceptable, !delegate.movesUnacceptableDownload {
            // On BlockingIO's threads, never the cooperative pool; finished even if the runner is cancelled now.
            try? await BlockingIO.runToCompletion { try? FileManager.default.removeItem(at: temporaryURL) }
            return .downloaded(file: nil, error: unacceptable, payload: .none, afterward: nil)
        }
        let destination =
            (task as? DownloadTask).flatMap { hooks.downloadTaskDidFinishDownloading?($0, temporaryURL, response) }
            ?? delegate.destination?(temporaryURL, response)
        guard let destination else {
            // No destination: the file is the caller's to use during the completion handler only.
            return .downloaded(
                file: temporaryURL, error: nil, payload: .assetPath(temporaryURL),
                afterward: { try? FileManager.default.removeItem(at: temporaryURL) })
        }
        let options = delegate.downloadOptions ?? []
        do {
            // On BlockingIO's threads, never the cooperative pool; finished even if the runner is cancelled now.
            try await BlockingIO.runToCompletion {
                do {
                    try DownloadFile.move(temporaryURL, to: destination, options: options)
                } catch {
                    try? FileManager.default.removeItem(at: temporaryURL)
                    throw error
                }
            }
        } catch {
            let failure = CourierError.fileOperationFailed(
                reason: "The download could not be moved to \(destination.path).", underlyingError: error,
                context: CourierError.Context(request: task.currentRequest, response: response))
            events.send(.failedToMoveDownload(task, failure), of: delegate)
            return .downloaded(file: destination, error: failure, payload: .assetPath(destination), afterward: nil)
        }
        events.send(.movedDownload(task), of: delegate)
        // The callback API, as AFNetworking's: the file is moved even for an unacceptable response, and the
        // completion handler gets both its URL and the error.
        return .downloaded(file: destination, error: unacceptable, payload: .assetPath(destination), afterward: nil)
    }
}
