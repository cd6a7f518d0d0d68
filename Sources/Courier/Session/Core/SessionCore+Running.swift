import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Running a task: in a runner task of its own (the factories and callbacks), or in the caller's task (the `async`
/// API).
extension SessionCore {
    func run(_ task: SessionTask, delegate: TaskDelegate) async {
        do {
            var startDate: Date?  // started when resumed
            let ticket = try await admitted(task, delegate: delegate, startDate: &startDate)
            try await TaskExchange.run(task, delegate: delegate, in: self, collect: false, ticket: ticket)
        } catch {
            complete(task, delegate: delegate, with: .failed(courierError(error, task: task, delegate: delegate)))
            return
        }
        complete(task, delegate: delegate, with: await outcome(of: task, delegate: delegate))
    }

    /// Runs a task for the `async` API, past the session's gate (``ExchangeAdmission``), and returns the typed result: serialization with the concrete serializer,
    /// and no completion handler, queue hop or type-erased cast. The task still goes through the session's map,
    /// hooks, timeouts, notifications and events like any other.
    func runTyped<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer
    ) async throws -> (Serializer.SerializedObject, Data) {
        // Only the choice here: this frame is one a task waiting in line keeps.
        switch enterAdmission(task, delegate: delegate) {
        case .now(let ticket):
            return try await runTypedNow(task, delegate: delegate, serializer: serializer, ticket: ticket)
        case .later(let waiter):
            return try await runAfterWaiting(waiter, task: task, delegate: delegate) { ticket in
                try await self.runTypedBody(
                    task, delegate: delegate, serializer: serializer,
                    collect: self.collects(task, delegate: delegate, hooks: self.hooks), ticket: ticket, started: true)
            }
        }
    }

    /// ``runTyped(_:delegate:serializer:)`` for a task past the gate at once.
    @inline(never)
    private func runTypedNow<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer, ticket: ExchangeAdmission.Ticket?
    ) async throws -> (Serializer.SerializedObject, Data) {
        if collects(task, delegate: delegate, hooks: hooks) {
            // The exchange can be aborted from outside (timeouts, `cancel()`), so the caller's own task runs it: no
            // runner task and no hop to one.
            task.attachRunner { delegate.exchange.cancel() }
            return try await withTaskCancellationHandler {
                try await runTypedBody(task, delegate: delegate, serializer: serializer, collect: true, ticket: ticket)
            } onCancel: {
                task.cancel()
            }
        }
        return try await runInOwnTask(task) {
            try await self.runTypedBody(
                task, delegate: delegate, serializer: serializer, collect: false, ticket: ticket)
        }
    }

    /// Runs `body` in a Swift task of its own, which ``SessionTask/cancel()`` on `task` interrupts; cancelling the
    /// caller cancels both.
    func runInOwnTask<Value: Sendable>(
        _ task: SessionTask, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let runner = Task { try await body() }
        task.attachRunner { runner.cancel() }
        return try await withTaskCancellationHandler {
            try await runner.value
        } onCancel: {
            runner.cancel()
            task.cancel()
        }
    }

    /// - Parameter started: whether the task has started already, its start announced (it waited at the gate).
    private func runTypedBody<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer, collect: Bool,
        ticket: ExchangeAdmission.Ticket?, started: Bool = false
    ) async throws -> (Serializer.SerializedObject, Data) {
        if !started { try begin(task) }
        do {
            // The first request goes out before the bookkeeping that need not precede it; the task started first.
            try await TaskExchange.run(
                task, delegate: delegate, in: self, collect: collect, announcingStartFrom: started ? nil : Date(),
                ticket: ticket)
        } catch {
            let failure = courierError(error, task: task, delegate: delegate)
            complete(task, delegate: delegate, with: .failed(failure))
            throw failure
        }
        let data = delegate.receivedData
        let value = serialized(data, of: task, with: serializer)
        complete(task, delegate: delegate, with: .serialized(value.map { $0 }, data: data))
        return (try value.get(), data)
    }

    /// Marks a task of the `async` API running, once.
    ///
    /// - Throws: ``CourierError/cancelled(context:)`` when it was cancelled (or completed) before it could start.
    func begin(_ task: SessionTask) throws {
        guard task.mutable.withLock({ $0.lifecycle.beginRun() }) else {
            throw CourierError.cancelled(context: CourierError.Context(request: task.originalRequest))
        }
    }

    /// Runs a download task for the `async` API on the road every task takes: the body into its file, then the
    /// response validated before the file is moved (``finishDownload(_:delegate:temporaryURL:)``), and the file's
    /// URL returned; no completion handler and no continuation. A Swift task of its own runs it, so that a caller
    /// that goes away still leaves the file moved or deleted.
    func runDownload(_ task: DownloadTask, delegate: TaskDelegate) async throws -> URL {
        try await runInOwnTask(task) { try await self.runDownloadBody(task, delegate: delegate) }
    }

    private func runDownloadBody(_ task: DownloadTask, delegate: TaskDelegate) async throws -> URL {
        try begin(task)
        do {
            var startDate: Date? = Date()
            let ticket = try await admitted(task, delegate: delegate, startDate: &startDate)
            try await TaskExchange.run(
                task, delegate: delegate, in: self, collect: false, announcingStartFrom: startDate, ticket: ticket)
        } catch {
            let failure = courierError(error, task: task, delegate: delegate)
            complete(task, delegate: delegate, with: .failed(failure))
            throw task.error ?? failure
        }
        let outcome = await outcome(of: task, delegate: delegate)
        guard complete(task, delegate: delegate, with: outcome) else {
            throw task.error ?? CourierError.cancelled(context: context(for: task, delegate: delegate))
        }
        if case .downloaded(_, let error?, _, _) = outcome { throw error }
        guard case .downloaded(let file?, _, _, _) = outcome else {
            throw CourierError.badServerResponse(
                reason: "the download finished without a file", underlyingError: nil,
                context: context(for: task, delegate: delegate))
        }
        return file
    }

    /// Whether an `async` call's exchanges are collected whole by the transport
    /// (``Transport/collect(_:cancellation:activity:)``): a data task with a small in-memory body or none, whose
    /// head and chunks nobody watches (no stream, download, progress closures or per-chunk hooks). The caller awaits
    /// the whole value anyway, so nothing is lost but what a task's observers could see mid-body:
    /// ``SessionTask/countOfBytesReceived`` moves once, at the end, ``SessionTask/suspend()`` does not pause such a
    /// body, and event monitors see the body as one chunk. Tasks made by the factories and the callback methods
    /// always stream.
    func collects(_ task: SessionTask, delegate: TaskDelegate, hooks: SessionHooks) -> Bool {
        guard task is DataTask, delegate.sink.keepsInMemory, delegate.uploadProgressHandler == nil,
            delegate.downloadProgressHandler == nil, !Self.watchesExchanges(hooks)
        else { return false }
        guard let body = delegate.uploadBody ?? task.requestSource.httpBody.map({ .data($0) }) else { return true }
        return (body.data?.count ?? .max) <= Self.largestCollectedUpload
    }

    /// Whether a hook watches an exchange as it goes (its head, its body's chunks, its upload's progress), which a
    /// collected exchange could not show it.
    static func watchesExchanges(_ hooks: SessionHooks) -> Bool {
        hooks.didReceiveResponse != nil || hooks.didReceiveData != nil || hooks.didSendBodyData != nil
    }

    /// Larger bodies are streamed, with progress as they go.
    static let largestCollectedUpload = 64 * 1024
}

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
        events.send(.completed(task, task.metrics, error: error), of: delegate)
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
            self.events.send(
                .serialized(task, object: object, error: error, serializer: delegate.serializer, payload: payload),
                of: delegate)
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
