import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
