import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task's lifecycle change, as ``SessionManager/events()`` delivers it.
public enum SessionEvent: Sendable {
    /// The task started or continued running.
    case didResume(SessionTask)
    /// The task was suspended.
    case didSuspend(SessionTask)
    /// The task finished: the serialized object, or the error.
    case didComplete(SessionTask, Result<(any Sendable)?, any Error>)
}
