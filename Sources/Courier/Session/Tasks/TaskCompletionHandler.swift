import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task reports when it completes: the HTTP response, the serialized object (for downloads, the file's
/// URL) and the error, if any (`AFURLSessionManager`'s completion handler).
public typealias TaskCompletionHandler =
    @Sendable (_ response: HTTPURLResponse?, _ object: (any Sendable)?, _ error: (any Error)?) -> Void
