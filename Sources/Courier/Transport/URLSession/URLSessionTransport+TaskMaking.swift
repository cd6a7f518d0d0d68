import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The task for `urlRequest`, made on the delegate's control queue; `nil` once the transport is shut down.
    ///
    /// Making a task waits for FoundationNetworking's work queue, which every `URLSession` of the process shares and a
    /// response head of many lines keeps busy for seconds (see the type's documentation). So the caller does not wait
    /// past its cancellation (a session's timeout is one): it gets ``CourierError/cancelled(context:)`` at once, and
    /// the task, if it is made later, is dropped before a byte is sent. Exactly one side deletes `uploadFile` then:
    /// the control queue when it makes no task, the delegate otherwise.
    func madeTask(_ urlRequest: URLRequest, uploadFile: URL?, request: TransportRequest) async throws
        -> URLSessionTask?
    {
        let wait = Locked(TaskWait.idle)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard wait.withLock({ $0.park(continuation) }) else {
                    if let uploadFile { try? FileManager.default.removeItem(at: uploadFile) }
                    return continuation.resume(throwing: CourierError.cancelled(context: CourierError.Context()))
                }
                delegate.control.async {
                    // No task for a caller already gone: nothing to drop, only the file to delete.
                    let task =
                        wait.withLock({ $0.isCancelled })
                        ? nil : self.makeTask(urlRequest, uploadFile: uploadFile, request: request)
                    if let waiting = wait.withLock({ $0.take() }) {
                        waiting.resume(returning: task)
                    } else if let task {
                        self.delegate.abandon(task.taskIdentifier)
                    } else if let uploadFile {
                        try? FileManager.default.removeItem(at: uploadFile)
                    }
                }
            }
        } onCancel: {
            wait.withLock { $0.cancel() }?.resume(throwing: CourierError.cancelled(context: CourierError.Context()))
        }
    }

    /// A caller waiting for its task to be made (see ``madeTask(_:uploadFile:request:)``).
    enum TaskWait {
        case idle
        case waiting(CheckedContinuation<URLSessionTask?, any Error>)
        case cancelled
        case answered

        var isCancelled: Bool {
            if case .cancelled = self { return true }
            return false
        }

        /// Stores `continuation`; `false` when the caller was cancelled first.
        mutating func park(_ continuation: CheckedContinuation<URLSessionTask?, any Error>) -> Bool {
            guard case .idle = self else { return false }
            self = .waiting(continuation)
            return true
        }

        /// The caller to answer with the task, unless it was cancelled.
        mutating func take() -> CheckedContinuation<URLSessionTask?, any Error>? {
            guard case .waiting(let continuation) = self else { return nil }
            self = .answered
            return continuation
        }

        /// The caller to fail now, if it is still waiting.
        mutating func cancel() -> CheckedContinuation<URLSessionTask?, any Error>? {
            switch self {
            case .answered:
                return nil
            case .waiting(let continuation):
                self = .cancelled
                return continuation
            case .idle, .cancelled:
                self = .cancelled
                return nil
            }
        }
    }
}
