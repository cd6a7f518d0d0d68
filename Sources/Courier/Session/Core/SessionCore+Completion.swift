import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Completing a task, exactly once: the error it ends with, serialization, and the one delivery path that
/// completion handlers, the `async` API, notifications, ``SessionManager/events()`` and monitors share.
extension SessionCore {
    func context(for task: SessionTask, delegate: TaskDelegate) -> CourierError.Context {
        CourierError.Context(
            request: task.currentRequest, response: task.response,
            data: delegate.isDownload ? nil : delegate.receivedData)  // a stream's is empty
    }

    /// The ``CourierError`` a task that failed with `error` ends with, with its request, response and body.
    func courierError(_ error: any Error, task: SessionTask, delegate: TaskDelegate) -> CourierError {
        let context = context(for: task, delegate: delegate)
        if delegate.state.withLock({ $0.clocks.timedOut }) { return .timedOut(context: context) }
        if error is CancellationError { return .cancelled(context: context) }
        guard let courier = error as? CourierError else {
            if error is FileChangedError {
                return .fileOperationFailed(
                    reason: String(describing: error), underlyingError: error, context: context)
            }
            return .requestFailed(underlyingError: error, context: context)
        }
        return courier.withContext { existing in
            if existing.request == nil { existing.request = context.request }
            if existing.response == nil { existing.response = context.response }
            if existing.data == nil { existing.data = context.data }
        }
    }

    /// Completes a task of the callback API that failed, exactly once: the download's file is abandoned, then
    /// ``deliver(_:delegate:object:error:payload:afterward:)``.
    func finish(_ task: SessionTask, delegate: TaskDelegate, error: any Error) {
        guard markCompleted(task, delegate: delegate, error: error) else { return }
        delegate.stream?.finish(error)
        let isDownload = delegate.isDownload
        delegate.downloadFile?.abandon(request: task.currentRequest, response: task.response)
        deliver(
            task, delegate: delegate, object: nil, error: error, payload: isDownload ? .none : responseData(delegate))
    }

    /// Completes a task of the callback API (or the `async` download) that succeeded, exactly once: serialization (in the runner, off the
    /// transport's threads, as AFNetworking's processing queue is), the download's file (moved on
    /// ``BlockingIO``'s threads), then ``deliver(_:delegate:object:error:payload:afterward:)``.
    ///
    /// - Returns: what was delivered; `nil` when the task had completed already and nothing was.
    @discardableResult
    func finishSucceeded(_ task: SessionTask, delegate: TaskDelegate) async -> (
        object: (any Sendable)?, error: (any Error)?
    )? {
        guard markCompleted(task, delegate: delegate, error: nil) else { return nil }
        delegate.stream?.finish(nil)
        delegate.downloadFile?.dropResumeDataRequest()
        if delegate.stream != nil {
            deliver(task, delegate: delegate, object: nil, error: nil, payload: .none)
            return (nil, nil)
        }
        if let temporaryURL = delegate.downloadFile?.finish() {
            let (file, error) = await finishDownload(task, delegate: delegate, temporaryURL: temporaryURL)
            return (file, error)
        }
        let data = delegate.receivedData
        do {
            let object = try serialize(data, of: task, with: delegate.serializer)
            deliver(task, delegate: delegate, object: object, error: nil, payload: responseData(delegate))
            return (object, nil)
        } catch {
            // As AFNetworking does, an unacceptable status still hands over the body it could parse.
            let failure = attachingRequest(of: task, to: error)
            let parsed = (failure as? CourierError).flatMap { $0.errorCode == -1011 ? $0.serializedObject : nil }
            deliver(task, delegate: delegate, object: parsed, error: failure, payload: responseData(delegate))
            return (parsed, failure)
        }
    }

    /// Serializes a body through the serializer's head-based entry: the built-in serializers make Foundation's
    /// `HTTPURLResponse` only for an error's context.
    func serialize<Serializer: ResponseSerializer>(
        _ data: Data, of task: SessionTask, with serializer: Serializer
    ) throws -> Serializer.SerializedObject {
        try serializer.serialize(head: task.head, data: data)
    }

    /// Marks the task completed, takes it out of the map and sends the completed event with its metrics; `false`
    /// (and nothing done) when it had already completed, so every path completes a task exactly once.
    func markCompleted(_ task: SessionTask, delegate: TaskDelegate, error: (any Error)?) -> Bool {
        guard task.markCompleted(error: error) else { return false }
        unregister(task)
        events.send(.completed(task, task.metrics, error: error))
        return true
    }

    /// Hands a completed task's object or error out: progress ends, the completion handler runs (for the callback
    /// API, on ``Settings/completionQueue`` as it is now, inside the completion group), then the did-complete
    /// notification, ``SessionManager/events()`` and monitors get it; `afterward` runs once all of that is done.
    func deliver(
        _ task: SessionTask, delegate: TaskDelegate, object: (any Sendable)?, error: (any Error)?,
        payload: CompletionUserInfo.Payload, afterward: (@Sendable () -> Void)? = nil
    ) {
        delegate.finishProgress(succeeded: error == nil)
        let complete: @Sendable () -> Void = {
            delegate.completion?(task.response, object, error)
            let info = CompletionUserInfo.make(
                serializer: delegate.serializer, object: object, error: error, payload: payload,
                metrics: task.metrics)
            self.events.send(.serialized(task, object: object, error: error, userInfo: info))
            afterward?()
            self.delivered(task)
        }
        guard delegate.hopsToCompletionQueue else { return complete() }
        let (queue, group) = settings.withLock { ($0.completionQueue ?? .main, $0.completionGroup) }
        queue.async(group: group ?? Self.defaultCompletionGroup, execute: complete)
    }

    /// The response body for the did-complete notification's user info.
    func responseData(_ delegate: TaskDelegate) -> CompletionUserInfo.Payload {
        .responseData(delegate.receivedData)
    }

    /// A serializer's error with the request it answered attached.
    func attachingRequest(of task: SessionTask, to error: any Error) -> any Error {
        (error as? CourierError)?.withContext { $0.request = task.currentRequest } ?? error
    }
}
