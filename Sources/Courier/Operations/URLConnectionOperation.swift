import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request as a Foundation `Operation` (AFNetworking 2's `AFURLConnectionOperation`): run it on an
/// `OperationQueue`, make other operations depend on it, pause and resume it.
///
/// The network work is a Courier session's: each run of the operation sends its request through a
/// ``SessionManager`` of its own on ``transport`` (shared by all operations unless you pass one), so redirects,
/// cookies, authentication, the security policy and timeouts behave as they do for tasks. AFNetworking 2 ran every
/// connection on one dedicated network thread with its own run loop; here the transport's event loop plays that
/// part, and the operation's own thread is never blocked.
///
/// The operation is asynchronous (``isAsynchronous`` is `true`): ``start()`` returns at once and the operation
/// reports ``isExecuting`` and ``isFinished`` through key-value notifications, which is what `OperationQueue`,
/// dependencies and `completionBlock` rely on. Its states and their transitions are AFNetworking 2's: ready →
/// paused, executing, or (only when cancelled) finished; executing → paused or finished; paused → ready.
///
/// The body goes to ``outputStream`` as it arrives when one is set (in constant memory, for large downloads), and is
/// kept in ``responseData`` otherwise. ``completionBlock`` runs on ``completionQueue`` inside ``completionGroup``
/// and is released after it has run, so an operation does not keep itself alive.
///
/// Thread safety: every mutable property lives in one store behind a lock (`Operation` is itself
/// `@unchecked Sendable`), which is why the class restates `@unchecked Sendable`. The streams are used by the
/// running operation only; set them before it starts.
open class URLConnectionOperation: Operation, @unchecked Sendable {
    /// Progress: the bytes of this step, the total so far, and the total expected (`-1` when unknown).
    public typealias ProgressBlock =
        @Sendable (_ bytes: Int64, _ totalBytes: Int64, _ totalBytesExpected: Int64) -> Void
    /// Decides a redirect: given the request Courier would send next and the 3xx response, returns it, a changed
    /// request, or `nil` to stop and deliver the 3xx response.
    public typealias RedirectResponseBlock =
        @Sendable (_ operation: URLConnectionOperation, _ request: URLRequest, _ redirectResponse: HTTPURLResponse?) ->
        URLRequest?
    /// Decides what is stored in the URL cache: the proposed response, a changed one, or `nil` for nothing.
    public typealias CacheResponseBlock =
        @Sendable (_ operation: URLConnectionOperation, _ cachedResponse: CachedURLResponse) -> CachedURLResponse?
    /// Answers an authentication challenge (a `401`).
    public typealias AuthenticationChallengeBlock =
        @Sendable (_ operation: URLConnectionOperation, _ challenge: AuthenticationChallenge) ->
        AuthenticationDisposition

    struct Blocks {
        var upload: ProgressBlock?
        var download: ProgressBlock?
        var redirect: RedirectResponseBlock?
        var cacheResponse: CacheResponseBlock?
        var challenge: AuthenticationChallengeBlock?
    }

    struct Store {
        var state = State.ready
        var request: URLRequest
        var response: HTTPURLResponse?
        var error: (any Error)?
        var data = Data()
        /// Body bytes kept so far, in `data` or written to the output stream: where a ranged resume continues.
        var received: Int64 = 0
        var outputStream: OutputStream?
        var inputStream: InputStream?
        /// A body set by ``HTTPRequestOperationManager`` (a multipart form), sent instead of ``inputStream``.
        var body: HTTPRequestBody?
        var credential: Credential?
        var securityPolicy = SecurityPolicy.default
        var shouldUseCredentialStorage = true
        var urlCache: URLCache?
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var userInfo: [String: any Sendable] = [:]
        var blocks = Blocks()
        /// The number of the current run; a run that is no longer current (paused, cancelled) changes nothing.
        var run = 0
        /// The current run's session, which cancelling or pausing invalidates.
        var manager: SessionManager?
        /// The completion block as it was set (the operation's own is a wrapper around it).
        var completion: (@Sendable () -> Void)?
        /// Called right after the completion block, in the same turn of the completion queue (for batches).
        var afterCompletion: (@Sendable () -> Void)?
    }

    let store: Locked<Store>
    /// The transport the operation's requests go through.
    public let transport: any Transport

    /// The transport operations use unless given one: the platform's default, made once.
    public static let sharedTransport: any Transport = SessionManager.defaultTransport()

    /// Where completion blocks and progress blocks run when ``completionQueue`` is not set: the main queue on Apple
    /// platforms, as in AFNetworking; on Linux a serial queue of Courier's, since nothing drains the main queue
    /// there unless the program runs `dispatchMain()` or a run loop.
    public static let defaultCompletionQueue: DispatchQueue = {
        #if canImport(Darwin)
            return DispatchQueue.main
        #else
            return DispatchQueue(label: "Courier.URLConnectionOperation.completion")
        #endif
    }()

    /// The group completion blocks run in when ``completionGroup`` is not set.
    static let defaultCompletionGroup = DispatchGroup()

    /// An operation for `request` on ``sharedTransport``.
    public convenience init(request: URLRequest) {
        self.init(request: request, transport: Self.sharedTransport)
    }

    /// An operation for `request` on `transport`.
    public init(request: URLRequest, transport: any Transport) {
        store = Locked(Store(request: request))
        self.transport = transport
        super.init()
    }

    // MARK: Properties

    /// The request; after a pause of an ``HTTPRequestOperation``, the one that resumes the download.
    public internal(set) var request: URLRequest {
        get { store.withLock { $0.request } }
        set { store.withLock { $0.request = newValue } }
    }

    /// The last response head received.
    public var response: HTTPURLResponse? { store.withLock { $0.response } }

    /// Why the operation failed: a ``CourierError`` (`-999` when cancelled, with the failing URL).
    open var error: (any Error)? { store.withLock { $0.error } }

    /// The body received so far, when it is kept in memory (no ``outputStream``); `nil` before any response.
    public var responseData: Data? {
        store.withLock { $0.outputStream == nil && $0.response != nil ? $0.data : nil }
    }

    /// ``responseData`` as text in ``responseStringEncoding``; `nil` when it is not valid there.
    public var responseString: String? {
        responseData.flatMap { String(data: $0, encoding: responseStringEncoding) }
    }

    /// The response's charset when it names one Courier knows, else UTF-8.
    public var responseStringEncoding: String.Encoding {
        response?.textEncodingName.flatMap { String.Encoding(ianaCharsetName: $0) } ?? .utf8
    }

    /// The request body as a stream (AFNetworking's proxy for `HTTPBodyStream`); read once, when the operation runs.
    /// Its length is taken from the request's `Content-Length` field when there is one.
    public var inputStream: InputStream? {
        get { store.withLock { $0.inputStream } }
        set { store.withLock { $0.inputStream = newValue } }
    }

    /// Where the body is written as it arrives, instead of memory. The operation opens it before the first write
    /// and closes it when it finishes (not when it pauses).
    public var outputStream: OutputStream? {
        get { store.withLock { $0.outputStream } }
        set { store.withLock { $0.outputStream = newValue } }
    }

    /// The credential for a `401` challenge (used once per challenge, as AFNetworking does).
    public var credential: Credential? {
        get { store.withLock { $0.credential } }
        set { store.withLock { $0.credential = newValue } }
    }

    /// Whether, without a ``credential``, the default credential for the challenge's protection space in
    /// `URLCredentialStorage.shared` is used; default `true`.
    public var shouldUseCredentialStorage: Bool {
        get { store.withLock { $0.shouldUseCredentialStorage } }
        set { store.withLock { $0.shouldUseCredentialStorage = newValue } }
    }

    /// The policy the server's certificate chain must pass (`https`).
    public var securityPolicy: SecurityPolicy {
        get { store.withLock { $0.securityPolicy } }
        set { store.withLock { $0.securityPolicy = newValue } }
    }

    /// The cache responses kept in memory are stored in and answered from; `nil` (the default) caches nothing.
    /// AFNetworking 2 used the shared cache: set `URLCache.shared` to do the same. Bodies written to an
    /// ``outputStream`` are not cached.
    public var urlCache: URLCache? {
        get { store.withLock { $0.urlCache } }
        set { store.withLock { $0.urlCache = newValue } }
    }

    /// Where ``completionBlock`` and the progress blocks run; ``defaultCompletionQueue`` when `nil`.
    public var completionQueue: DispatchQueue? {
        get { store.withLock { $0.completionQueue } }
        set { store.withLock { $0.completionQueue = newValue } }
    }

    /// The group ``completionBlock`` runs in; a private group of Courier's when `nil`.
    public var completionGroup: DispatchGroup? {
        get { store.withLock { $0.completionGroup } }
        set { store.withLock { $0.completionGroup = newValue } }
    }

    /// Anything the caller wants to keep with the operation.
    public var userInfo: [String: any Sendable] {
        get { store.withLock { $0.userInfo } }
        set { store.withLock { $0.userInfo = newValue } }
    }

    /// Whether the operation is paused.
    public var isPaused: Bool { store.withLock { $0.state == .paused } }

    open override var isReady: Bool { store.withLock { $0.state == .ready } && super.isReady }
    open override var isExecuting: Bool { store.withLock { $0.state == .executing } }
    open override var isFinished: Bool { store.withLock { $0.state == .finished } }
    open override var isAsynchronous: Bool { true }

    /// Runs `block` on ``completionQueue`` inside ``completionGroup`` once the operation has finished, then releases
    /// it.
    open override var completionBlock: (@Sendable () -> Void)? {
        get { store.withLock { $0.completion } }
        set {
            store.withLock { $0.completion = newValue }
            guard let block = newValue else {
                super.completionBlock = nil
                return
            }
            super.completionBlock = { [weak self] in
                guard let self else { return }
                // Off the caller's thread: Foundation runs the operation's own completion block on a queue of its own.
                self.prepareForCompletion()
                let (queue, group) = self.callbackQueues
                queue.async(group: group) {
                    block()
                    self.store.withLock { $0.afterCompletion }?()
                    self.completionBlock = nil
                }
            }
        }
    }

    /// Work done before the completion block is queued, off the caller's thread and the completion queue
    /// (``HTTPRequestOperation`` serializes its response here).
    func prepareForCompletion() {}

    /// Calls `body` after the completion block, in the same turn of the completion queue; the operation gets an
    /// empty completion block when it has none, so `body` always runs once it has finished.
    func setAfterCompletion(_ body: @escaping @Sendable () -> Void) {
        store.withLock { $0.afterCompletion = body }
        if completionBlock == nil { completionBlock = {} }
    }

    /// ``completionQueue`` and ``completionGroup``, or their defaults.
    var callbackQueues: (DispatchQueue, DispatchGroup) {
        store.withLock {
            ($0.completionQueue ?? Self.defaultCompletionQueue, $0.completionGroup ?? Self.defaultCompletionGroup)
        }
    }

    // MARK: Blocks

    /// Called on ``completionQueue`` as the request body goes out.
    public func setUploadProgressBlock(_ block: ProgressBlock?) {
        store.withLock { $0.blocks.upload = block }
    }

    /// Called on ``completionQueue`` as the response body arrives.
    public func setDownloadProgressBlock(_ block: ProgressBlock?) {
        store.withLock { $0.blocks.download = block }
    }

    /// Called before each redirect is followed; see ``RedirectResponseBlock``.
    public func setRedirectResponseBlock(_ block: RedirectResponseBlock?) {
        store.withLock { $0.blocks.redirect = block }
    }

    /// Called before a response is stored in ``urlCache``; see ``CacheResponseBlock``.
    public func setCacheResponseBlock(_ block: CacheResponseBlock?) {
        store.withLock { $0.blocks.cacheResponse = block }
    }

    /// Called for each authentication challenge instead of answering with ``credential``.
    public func setWillSendRequestForAuthenticationChallengeBlock(_ block: AuthenticationChallengeBlock?) {
        store.withLock { $0.blocks.challenge = block }
    }

    // MARK: Running

    /// Starts the request, or, when the operation was cancelled, finishes it with a cancellation error. Does
    /// nothing unless the operation is ready.
    open override func start() {
        if isCancelled {
            finishCancelled()
            return
        }
        guard transition(from: [.ready], to: .executing) else { return }
        post(.operationDidStart)
        // A cancel that came between the check above and the transition found nothing running.
        if isCancelled {
            finishCancelled()
            return
        }
        launch()
    }

    /// Cancels the operation: a running request is stopped and the operation finishes with a cancellation error
    /// (`-999`); one that has not started finishes so when it is started (an `OperationQueue` starts it at once).
    open override func cancel() {
        guard !isFinished, !isCancelled else { return }
        super.cancel()
        if isExecuting { finishCancelled() }
    }

    /// Pauses the operation: a running request is stopped, what was received is kept, and
    /// `Notification.Name.operationDidFinish` is posted. Does nothing when the operation is paused,
    /// finished or cancelled.
    open func pause() {
        let outcome = store.withLock { store -> (State, SessionManager?)? in
            guard store.state == .ready || store.state == .executing, !isCancelled else { return nil }
            let old = store.state
            store.state = .paused
            store.run += 1
            defer { store.manager = nil }
            return (old, store.manager)
        }
        guard let (old, manager) = outcome else { return }
        manager?.invalidate(cancelingTasks: true)
        notifyTransition(from: old, to: .paused)
        if old == .executing { post(.operationDidFinish) }
    }

    /// Resumes a paused operation: it becomes ready and starts again (an ``HTTPRequestOperation`` continues its
    /// download where it stopped).
    open func resume() {
        guard transition(from: [.paused], to: .ready) else { return }
        start()
    }

    /// Moves from one of `from` to `to` if AFNetworking 2 allows it, with key-value notifications.
    @discardableResult
    func transition(from: Set<State>, to next: State) -> Bool {
        let cancelled = isCancelled
        let old = store.withLock { store -> State? in
            guard from.contains(store.state), store.state.canMove(to: next, cancelled: cancelled) else { return nil }
            defer { store.state = next }
            return store.state
        }
        guard let old else { return false }
        notifyTransition(from: old, to: next)
        return true
    }

    /// The notifications `OperationQueue` and dependencies watch, sent after the change and outside the lock (the
    /// queue reads the state back while it is notified).
    private func notifyTransition(from old: State, to next: State) {
        willChangeValue(forKey: next.key)
        willChangeValue(forKey: old.key)
        didChangeValue(forKey: old.key)
        didChangeValue(forKey: next.key)
    }

    private func post(_ name: Notification.Name) {
        NotificationCenter.default.post(name: name, object: self)
    }

    /// Stops any request in flight, records the cancellation as the error, and finishes.
    private func finishCancelled() {
        let manager = store.withLock { store -> SessionManager? in
            store.run += 1
            if store.error == nil {
                store.error = CourierError.cancelled(context: CourierError.Context(request: store.request))
            }
            defer { store.manager = nil }
            return store.manager
        }
        manager?.invalidate(cancelingTasks: true)
        finish()
    }

    func finish() {
        guard transition(from: [.ready, .executing], to: .finished) else { return }
        store.withLock { $0.outputStream }?.close()
        post(.operationDidFinish)
    }

    /// Starts a new run of the request in a Swift task of its own.
    private func launch() {
        let run = store.withLock { store -> Int in
            store.run += 1
            return store.run
        }
        Task { await self.perform(run: run) }
    }

}

extension Notification.Name {
    /// Posted when a ``URLConnectionOperation`` starts (AFNetworking 2's `AFNetworkingOperationDidStartNotification`);
    /// the object is the operation.
    public static let operationDidStart = Notification.Name("com.alamofire.networking.operation.start")
    /// Posted when a ``URLConnectionOperation`` finishes or pauses (`AFNetworkingOperationDidFinishNotification`);
    /// the object is the operation.
    public static let operationDidFinish = Notification.Name("com.alamofire.networking.operation.finish")
}

/// An `InputStream` read in 64 KiB chunks, as a request body; the stream is read only under the lock, by the one
/// request that sends it.
struct InputStreamChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let stream: Locked<InputStream>

    init(_ stream: InputStream) {
        self.stream = Locked(stream)
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: stream) }

    struct AsyncIterator: AsyncIteratorProtocol {
        let stream: Locked<InputStream>

        mutating func next() async throws -> Data? {
            try stream.withLock { stream in
                if stream.streamStatus == .notOpen { stream.open() }
                var chunk = Data(count: 64 * 1024)
                let read = chunk.withUnsafeMutableBytes { buffer -> Int in
                    guard let base = buffer.bindMemory(to: UInt8.self).baseAddress else { return 0 }
                    return stream.read(base, maxLength: buffer.count)
                }
                if read < 0 {
                    throw CourierError.fileOperationFailed(
                        reason: "the input stream failed", underlyingError: stream.streamError,
                        context: CourierError.Context())
                }
                if read == 0 {
                    stream.close()
                    return nil
                }
                return chunk.prefix(read)
            }
        }
    }
}
