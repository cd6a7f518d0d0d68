import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Session-level hooks (`AFURLSessionManager`'s blocks). Every hook is optional; without it the session does what
/// AFNetworking does by default.
public struct SessionHooks: Sendable {
    /// Called before each redirect is followed with the 3xx response and the request Courier would send next.
    /// Return that request, a changed one, or `nil` to stop and deliver the 3xx response. Default: follow.
    public var willPerformRedirection: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> URLRequest?)?
    /// Called when the final response head arrives. Default: ``ResponseDisposition/allow``.
    public var didReceiveResponse: (@Sendable (SessionTask, HTTPURLResponse) -> ResponseDisposition)?
    /// Called when ``didReceiveResponse`` turned a data task's body into a download
    /// (``ResponseDisposition/becomeDownload``), before the first byte is written (AFNetworking's
    /// `setDataTaskDidBecomeDownloadTaskBlock:`). The task stays the same object: its completion then gets the
    /// file's URL.
    public var dataTaskDidBecomeDownload: (@Sendable (DataTask) -> Void)?
    /// Called as the request body goes out: bytes in this step, total sent, total expected (`-1` unknown).
    public var didSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
    /// Called with each chunk of a data task's response body.
    public var didReceiveData: (@Sendable (SessionTask, Data) -> Void)?
    /// Called before a data task's response is stored in ``SessionConfiguration/urlCache``; return it, a changed
    /// one, or `nil` not to store it. Default: store it.
    public var willCacheResponse: (@Sendable (DataTask, CachedURLResponse) -> CachedURLResponse?)?
    /// Called when a task completes, before its completion handler, with the task's error if it failed.
    public var didComplete: (@Sendable (SessionTask, (any Error)?) -> Void)?
    /// Decides where every finished download goes; when it returns a URL, it takes precedence over the task's own
    /// destination (as in AFNetworking).
    public var downloadTaskDidFinishDownloading: (@Sendable (DownloadTask, URL, HTTPURLResponse?) -> URL?)?
    /// Called as every download writes its body (AFNetworking's session-wide `setDownloadTaskDidWriteDataBlock:`):
    /// the bytes of this step, the task's total so far (a resumed download's offset included) and the total
    /// expected, the offset included (`-1` when unknown).
    public var downloadTaskDidWriteData: (@Sendable (DownloadTask, Int64, Int64, Int64) -> Void)?
    /// Called when a download continued from resume data finds the server continuing its file
    /// (`setDownloadTaskDidResumeBlock:`): the offset it continues at and the total expected (`-1` when unknown).
    public var downloadTaskDidResume: (@Sendable (DownloadTask, Int64, Int64) -> Void)?
    /// Answers a `401` challenge (Basic or Digest). Default: ``AuthenticationDisposition/performDefaultHandling``,
    /// which answers with ``SessionConfiguration/credential`` once.
    public var authenticationChallenge: (@Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationDisposition)?
    /// Gives a new body for a request whose body can be sent only once (``HTTPRequestBody/stream(_:length:)``, or
    /// any body made with `isReplayable: false`) when the session would send it again: to follow a 307 or 308, to
    /// answer a `401` challenge, or for a retry (AFNetworking's `setTaskNeedNewBodyStreamBlock:`). Return `nil` to
    /// leave the request as it ended (the 3xx or the `401` delivered, the failure kept). Default: `nil`. A replayable
    /// body makes its bytes again by itself and never asks.
    public var needNewBodyStream: (@Sendable (SessionTask) -> HTTPRequestBody?)?
    /// Called once when the session has been invalidated and its last task has completed
    /// (`setSessionDidBecomeInvalidBlock:`), with the error that invalidated it, if any; then
    /// `Notification.Name.sessionDidInvalidate` is posted.
    public var sessionDidBecomeInvalid: (@Sendable ((any Error)?) -> Void)?
    /// Decides whether to trust a server, instead of the session's ``SecurityPolicy``: given the host and the
    /// certificate chain the server presented (DER, leaf first), before any byte of a request is sent. Called by
    /// transports that can see the chain (``NIOTransport``); ``URLSessionTransport`` on Linux never sees one (see its
    /// gaps), so there the hook is not called and the platform decides. Default: the security policy decides.
    public var serverTrust: (@Sendable (_ host: String, _ certificates: [Data]) -> ServerTrustDisposition)?

    /// No hooks.
    public init() {}
}

/// What to do with a response head (`NSURLSessionResponseDisposition`).
public enum ResponseDisposition: Sendable, Hashable {
    /// Read the body as planned.
    case allow
    /// Cancel the task.
    case cancel
    /// Write the body to a file instead of memory; the completion's object is then the file's URL. A body that
    /// already goes to a file or to a streaming consumer (``DataStreamTask``) is read as planned.
    case becomeDownload
}
