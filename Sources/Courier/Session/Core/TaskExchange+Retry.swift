import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The interceptor steps: the adapter changes each request before it is sent, and the retrier decides whether a
/// failure (a transport error before the response, or a status the serializer will not accept) sends the request
/// again.
extension TaskExchange {
    /// Runs the adapters on ``request``; their error fails the exchange as a ``CourierError``.
    @inline(never)
    func adapt() async throws {
        guard let interceptor, interceptor.adaptsRequests else { return }
        do {
            request = try await interceptor.adapt(request, for: task)
        } catch let error as CourierError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: .init(request: request))
        }
    }

    /// Asks the retrier about `error`, thrown before a response arrived or, with `response`, while its body did;
    /// waits the delay it asks for and returns `true` when the request is to be sent again.
    @inline(never)
    func retry(after error: any Error, response: HTTPURLResponse? = nil) async throws -> Bool {
        guard interceptor != nil, !(error is CancellationError), !core.isCancelled(task, delegate: delegate) else {
            return false
        }
        let failure = core.courierError(error, task: task, delegate: delegate)
        if case .cancelled = failure { return false }
        return try await retry(dueTo: failure, response: response)
    }

    /// Asks the retrier about a failed response (see ``isFailure(_:serializer:)``), its body unread, and returns
    /// `true` when the request is to be sent again (the body is read and dropped first).
    @inline(never)
    func retryIfStatusFails(_ response: TransportResponse, head: ResponseHead) async throws -> Bool {
        guard interceptor != nil, Self.isFailure(head.statusCode, serializer: delegate.serializer),
            let http = head.response
        else { return false }
        let failure = CourierError.unacceptableStatusCode(
            head.statusCode, context: .init(request: request, response: http), underlyingError: nil)
        guard try await retry(dueTo: failure, response: http, discarding: response.body) else { return false }
        return true
    }

    /// Asks the retrier about a download whose body failed part-way (`head` had arrived); when it says retry, sends
    /// `original` again, asking for the rest of the body when the response allows that (`Range` from the file's
    /// length, `If-Range` with the response's strong validator; see ``retryIfResumeFails(_:head:)`` for the answer),
    /// else for the whole body with the file emptied. Returns `true` when the request is to be sent again.
    @inline(never)
    func retryRestOfDownload(after error: any Error, head: ResponseHead, original: TaskRequest) async throws
        -> Bool
    {
        guard
            let (file, written) = delegate.downloadFile?.written,
            try await retry(after: error, response: head.response)
        else { return false }
        source = original
        // A decoded body's bytes are not the ranges of the encoded representation the server counts.
        let encoding = head.response?.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? "identity"
        let resume =
            encoding == "identity"
            ? DownloadResumeData.make(request: request, response: head.response, file: file, bytesOnDisk: written)
            : nil
        if written > 0, let validator = resume?.validator {
            delegate.downloadFile?.resumeOffset = written
            request.setValue("bytes=\(written)-", forHTTPHeaderField: "Range")
            request.setValue(validator, forHTTPHeaderField: "If-Range")
        } else {
            try await delegate.downloadFile?.restart()
        }
        return true
    }

    /// Whether a response with `status` failed, for the retriers: a client or server error (400 and up), or a
    /// status the task's serializer will not accept. A serializer that accepts every status (as `courier`'s does)
    /// still has its 4xx and 5xx retried by a policy that lists them.
    static func isFailure(_ status: Int, serializer: any ResponseSerializer) -> Bool {
        if status >= 400 { return true }
        guard let validating = serializer as? any ResponseValidating, let codes = validating.acceptableStatusCodes
        else { return false }
        return !codes.contains(status)
    }

    @inline(never)
    private func retry(
        dueTo failure: CourierError, response: HTTPURLResponse?, discarding body: DataChunks? = nil
    ) async throws -> Bool {
        guard let interceptor, bodyCanGoAgain() else { return false }
        let decision = await interceptor.retry(request, for: task, dueTo: failure, response: response)
        let delay: Duration
        switch decision {
        case .doNotRetry: return false
        case .doNotRetryWithError(let error): throw error
        case .retry: delay = .zero
        case .retryWithDelay(let wait): delay = max(.zero, wait)
        }
        if let body { await discard(body) }
        task.mutable.withLock { $0.retried() }
        core.events.send(.retrying(task, error: failure, delay: delay), of: delegate)
        try await pause(for: delay)
        return true
    }

    /// Waits `delay`, ending early with `CancellationError` when the task, its exchanges or its Swift task are
    /// cancelled (a timeout cancels the exchanges). The wait does not count against the idle timeout, only against
    /// the resource deadline.
    private func pause(for delay: Duration) async throws {
        guard delay > .zero else { return try core.checkCancellation(task, delegate: delegate) }
        let sleeper = Task { try await Task.sleep(for: delay) }
        delegate.exchange.onCancel { sleeper.cancel() }
        delegate.state.withLock { $0.waitToRetry(true) }
        defer {
            delegate.exchange.clear()
            delegate.state.withLock { $0.waitToRetry(false) }
        }
        try await withTaskCancellationHandler {
            try await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        try core.checkCancellation(task, delegate: delegate)
    }
}
