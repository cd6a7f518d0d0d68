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
            data: delegate.sink.isFile ? nil : delegate.receivedData)  // a stream's is empty
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

    /// Completes a task, exactly once, whatever road ran it: marks it completed with its metrics, takes it out of
    /// the map, sends the completed event, ends its streamed body, abandons the download's file of a failed task, and
    /// delivers the outcome (``deliver(_:delegate:object:error:payload:afterward:)``).
    ///
    /// - Returns: `false` (and nothing done) when the task had completed already.
    @discardableResult
    func complete(_ task: SessionTask, delegate: TaskDelegate, with outcome: TaskOutcome) -> Bool {
        let error = outcome.taskError
        guard task.markCompleted(error: error) else { return false }
        unregister(task)
        events.send(.completed(task, task.metrics, error: error))
        let sink = delegate.sink
        sink.stream?.finish(error)
        switch outcome {
        case .failed(let failure):
            delegate.downloadFile?.abandon(request: task.currentRequest, response: task.response)
            let payload: CompletionUserInfo.Payload = sink.isFile ? .none : .responseData(delegate.receivedData)
            deliver(task, delegate: delegate, object: nil, error: failure, payload: payload)
        case .serialized(.success(let object), let data):
            deliver(task, delegate: delegate, object: object, error: nil, payload: .responseData(data))
        case .serialized(.failure(let failure), let data):
            // As AFNetworking does, an unacceptable status still hands over the body it could parse.
            let parsed = (failure as? CourierError).flatMap { $0.errorCode == -1011 ? $0.serializedObject : nil }
            deliver(task, delegate: delegate, object: parsed, error: failure, payload: .responseData(data))
        case .downloaded(let file, let failure, let payload, let afterward):
            deliver(task, delegate: delegate, object: file, error: failure, payload: payload, afterward: afterward)
        case .ended:
            deliver(task, delegate: delegate, object: nil, error: error, payload: .none)
        }
        return true
    }

    /// The outcome of a task whose exchanges succeeded, with its delegate's serializer: nothing for a streamed body,
    /// the download's file validated and moved (``finishDownload(_:delegate:temporaryURL:)``, on ``BlockingIO``'s
    /// threads), or the body serialized (in the runner, off the transport's threads, as AFNetworking's processing
    /// queue is).
    func outcome(of task: SessionTask, delegate: TaskDelegate) async -> TaskOutcome {
        delegate.downloadFile?.dropResumeDataRequest()
        switch delegate.sink {
        case .stream: return .ended(nil)
        case .file(let file):
            if let temporaryURL = file.finish() {
                return await finishDownload(task, delegate: delegate, temporaryURL: temporaryURL)
            }
        case .memory: break
        }
        let data = delegate.receivedData
        return .serialized(erasedSerialized(data, of: task, with: delegate.serializer), data: data)
    }

    /// ``serialized(_:of:with:)`` for a serializer known only as `any ResponseSerializer`.
    private func erasedSerialized<Serializer: ResponseSerializer>(
        _ data: Data, of task: SessionTask, with serializer: Serializer
    ) -> Result<any Sendable, any Error> {
        serialized(data, of: task, with: serializer).map { $0 }
    }

    /// The body serialized, or the serializer's error with the request it answered attached.
    func serialized<Serializer: ResponseSerializer>(
        _ data: Data, of task: SessionTask, with serializer: Serializer
    ) -> Result<Serializer.SerializedObject, any Error> {
        Result { try serializer.serialize(head: task.head, data: data) }.mapError { attachingRequest(of: task, to: $0) }
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

    /// A serializer's error with the request it answered attached.
    func attachingRequest(of task: SessionTask, to error: any Error) -> any Error {
        (error as? CourierError)?.withContext { $0.request = task.currentRequest } ?? error
    }
}

/// How a task ended, as the road that ran it found it; `SessionCore.complete(_:delegate:with:)` hands it out.
///
/// The work an outcome needs (serializing the body, validating and moving a download's file) is done before the
/// task completes, so the one completion function never waits.
enum TaskOutcome {
    /// The exchanges failed: a transport error, cancellation or a timeout, as the ``CourierError`` to report.
    case failed(any Error)
    /// The body is whole and was serialized: the object, or the serializer's error; `data` is the body, for the
    /// did-complete notification.
    case serialized(Result<any Sendable, any Error>, data: Data)
    /// A download's file, validated and then moved, kept or deleted: its URL (`nil` when deleted), the error to hand
    /// over with it, the notification's payload, and what to do once the outcome is handed out (delete a file that
    /// had no destination).
    case downloaded(
        file: URL?, error: (any Error)?, payload: CompletionUserInfo.Payload, afterward: (@Sendable () -> Void)?)
    /// Nothing to hand over: a streamed body (its consumer had it), or a connection that closed, with its error.
    case ended((any Error)?)

    /// The task's own ``SessionTask/error``: transport errors, cancellation and timeouts, never a serializer's or a
    /// validation's.
    var taskError: (any Error)? {
        switch self {
        case .failed(let error): error
        case .ended(let error): error
        case .serialized, .downloaded: nil
        }
    }
}
