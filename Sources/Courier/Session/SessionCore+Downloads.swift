import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A finished download's file: moved where the hook or the task's destination says, or handed over in place.
extension SessionCore {
    func finishDownload(_ task: SessionTask, delegate: TaskDelegate, temporaryURL: URL) async {
        let response = task.response
        let destination =
            (task as? DownloadTask).flatMap { hooks.downloadTaskDidFinishDownloading?($0, temporaryURL, response) }
            ?? delegate.destination?(temporaryURL, response)
        guard let destination else {
            // No destination: the file is the caller's to use during the completion handler only.
            deliver(
                task, delegate: delegate, object: temporaryURL, error: nil,
                payload: .assetPath(temporaryURL)
            ) {
                try? FileManager.default.removeItem(at: temporaryURL)
            }
            return
        }
        let options = delegate.downloadOptions
        do {
            // On BlockingIO's threads, never the cooperative pool; finished even if the runner is cancelled now.
            try await BlockingIO.runToCompletion {
                do {
                    try Self.move(temporaryURL, to: destination, options: options)
                } catch {
                    try? FileManager.default.removeItem(at: temporaryURL)
                    throw error
                }
            }
        } catch {
            let failure = CourierError.fileOperationFailed(
                reason: "The download could not be moved to \(destination.path).", underlyingError: error,
                context: CourierError.Context(request: task.currentRequest, response: response))
            events.send(.failedToMoveDownload(task, failure))
            deliver(task, delegate: delegate, object: destination, error: failure, payload: .assetPath(destination))
            return
        }
        events.send(.movedDownload(task))
        do {
            try (delegate.serializer as? any ResponseValidating)?.validate(head: task.head, data: nil)
            deliver(task, delegate: delegate, object: destination, error: nil, payload: .assetPath(destination))
        } catch {
            deliver(task, delegate: delegate, object: destination, error: error, payload: .assetPath(destination))
        }
    }

    /// Moves `file` to `destination` as `options` say; blocking, so called on ``BlockingIO``'s threads.
    private static func move(_ file: URL, to destination: URL, options: DownloadOptions) throws {
        let manager = FileManager.default
        if options.contains(.createIntermediateDirectories) {
            try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        if options.contains(.removePreviousFile), manager.fileExists(atPath: destination.path) {
            try manager.removeItem(at: destination)
        }
        try manager.moveItem(at: file, to: destination)
    }
}
