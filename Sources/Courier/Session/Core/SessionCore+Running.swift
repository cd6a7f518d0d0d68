import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Running a task: in a runner task of its own (the factories and callbacks), or in the caller's task (the `async`
/// API).
extension SessionCore {
    func run(_ task: SessionTask, delegate: TaskDelegate) async {
        do {
            try await TaskExchange.run(task, delegate: delegate, in: self, collect: false)
        } catch {
            complete(task, delegate: delegate, with: .failed(courierError(error, task: task, delegate: delegate)))
            return
        }
        complete(task, delegate: delegate, with: await outcome(of: task, delegate: delegate))
    }

    /// Runs a task for the `async` API and returns the typed result: serialization with the concrete serializer,
    /// and no completion handler, queue hop or type-erased cast. The task still goes through the session's map,
    /// hooks, timeouts, notifications and events like any other.
    func runTyped<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer
    ) async throws -> (Serializer.SerializedObject, Data) {
        if collects(task, delegate: delegate, hooks: hooks) {
            // The exchange can be aborted from outside (timeouts, `cancel()`), so the caller's own task runs it: no
            // runner task and no hop to one.
            task.attachRunner { delegate.exchange.cancel() }
            return try await withTaskCancellationHandler {
                try await runTypedBody(task, delegate: delegate, serializer: serializer, collect: true)
            } onCancel: {
                task.cancel()
            }
        }
        return try await runInOwnTask(task) {
            try await self.runTypedBody(task, delegate: delegate, serializer: serializer, collect: false)
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

    private func runTypedBody<Serializer: ResponseSerializer>(
        _ task: SessionTask, delegate: TaskDelegate, serializer: Serializer, collect: Bool
    ) async throws -> (Serializer.SerializedObject, Data) {
        try begin(task)
        do {
            // The first request goes out before the bookkeeping that need not precede it; the task started first.
            try await TaskExchange.run(
                task, delegate: delegate, in: self, collect: collect, announcingStartFrom: Date())
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
    private func begin(_ task: SessionTask) throws {
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
            try await TaskExchange.run(task, delegate: delegate, in: self, collect: false, announcingStartFrom: Date())
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
