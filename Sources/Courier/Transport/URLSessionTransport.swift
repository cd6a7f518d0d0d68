import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The transport on Foundation's `URLSession`: Courier's default on Apple platforms, selectable on Linux.
///
/// It sends exactly the request it is given: redirects are not followed (the 3xx response is returned, so the
/// session's redirect policy sees every hop), no cookies are read or stored, nothing is cached, no stored
/// credentials are offered, and the request and resource timeouts are set to 7 days because the session layer runs
/// its own. One `URLSession` with one delegate serves every request; ``shutdown()`` invalidates it.
///
/// What `URLSession` still does on its own, on every platform, and cannot be turned off:
/// - It sends `Accept-Encoding` (on Linux `deflate, gzip, br, zstd`) unless the request has one, and **decompresses
///   the body itself**: the body handed back is the decoded one, while the `Content-Encoding` and `Content-Length`
///   fields still describe the encoded one (measured on Linux: `Content-Length: 73`, `Content-Encoding: gzip`, 12,000
///   bytes of body). Do not decompress again.
/// - It adds fields the request lacks; on Linux `User-Agent` (`<process> (unknown version) curl/<version>`),
///   `Accept-Language: en` and `Connection: keep-alive`.
/// - It joins repeated response fields into one value with `, ` (two `Set-Cookie` arrive as one `a=1, b=2`), and it
///   does not report the HTTP version: ``TransportResponse/httpVersion`` is always `HTTP/1.1`, even over HTTP/2.
///
/// Bodies: a ``RequestBody/data`` body is sent from memory as `httpBody`. Any other body (a file, a stream) is first
/// copied into a temporary file, chunk by chunk so memory stays constant, and sent with
/// `uploadTask(with:fromFile:)`, which sends `Content-Length`; the file is deleted when the task completes. Streaming
/// it instead is not an option on Linux: a streamed body (`uploadTask(withStreamedRequest:)` or `httpBodyStream`)
/// always goes out chunked, and if `Content-Length` is set as well URLSession sends both headers, which servers answer
/// with 400. Upload progress comes from `didSendBodyData`.
///
/// The response body is pulled: ``TransportResponse/body`` is fed by the delegate and holds at most
/// ``Configuration/maximumBufferedBytes`` in memory. Beyond that, on Apple platforms the `URLSessionTask` is
/// suspended until the consumer has pulled the buffer down to half the limit. On Linux suspending a running task
/// does not pause it: it drops the connection, and `resume()` sends the request again from the start (measured: the
/// server saw the request twice, and the body arrived with the bytes received before the suspension repeated in
/// front of it), so there the excess is written to an unlinked temporary file instead and read back as the consumer
/// pulls: memory stays bounded, disk use does not.
///
/// ## Gaps on Linux
///
/// Measured with swift-corelibs-foundation 6.3.1 on libcurl 7.88.1 (see the *Transports* article); prefer
/// ``NIOTransport`` on Linux.
/// - No server-trust challenge is ever delivered and the peer certificate cannot be seen, so **no certificate or
///   public-key pinning**; a private CA can only be trusted through the system bundle file.
/// - **No resume data** (`cancel(byProducingResumeData:)` always yields `nil`); Courier resumes downloads itself with
///   `Range`.
/// - A streamed body of known length cannot be sent with `Content-Length` (see above: this transport goes through a
///   temporary file), and an interim `100 Continue` reaches the delegate as a response (this transport skips it).
/// - `URLCache` never stores HTTP responses (this transport turns caching off on every platform anyway: the session
///   layer owns it).
/// - Task metrics are never delivered.
/// - Slow: about 6.5× fewer requests per second than ``NIOTransport`` at 32 concurrent requests (it keeps closing and
///   reopening connections), about 11× slower uploads and about 1.7× slower downloads.
/// - No HTTP/2 over cleartext (h2c); HTTP/2 only over TLS, negotiated by libcurl, with nothing to configure.
/// - Suspending a running task restarts it (see above), so backpressure spills to disk.
/// - **A hostile server can crash the process.** FoundationNetworking traps, inside libcurl's callbacks and before
///   any delegate runs, on a head cut off after its first line break ("Transfer completed, but there's no
///   response") and on a `Content-Length` of 2^63 − 512 or more. Use this transport on Linux only with servers you
///   trust (see SECURITY.md).
public final class URLSessionTransport: Transport {
    /// How the session connects and buffers.
    public struct Configuration: Sendable {
        /// The most connections opened to one host (`httpMaximumConnectionsPerHost`); default 32.
        public var maximumConnectionsPerHost: Int = 32
        /// The most response-body bytes held in memory for a consumer that has not pulled them yet; default 1 MiB.
        public var maximumBufferedBytes: Int = 1 << 20

        /// The default configuration.
        public init() {}
    }

    /// The configuration the session was made with.
    public let configuration: Configuration
    let delegate: URLSessionTransportDelegate
    private let session: URLSession
    /// Whether ``shutdown()`` has run; task creation happens under this lock, so no task is made on an invalidated
    /// session (which raises an Objective-C exception on Apple platforms).
    private let isShutDown = Locked(false)

    /// The request and resource timeout: effectively none, but small enough for libcurl's millisecond arithmetic.
    static let noTimeout: TimeInterval = 7 * 24 * 60 * 60

    /// Creates a transport with its own `URLSession`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        #if canImport(FoundationNetworking)
            let backpressure = URLSessionTransportDelegate.Backpressure.spillToFile
        #else
            let backpressure = URLSessionTransportDelegate.Backpressure.suspendTask
        #endif
        delegate = URLSessionTransportDelegate(
            maximumBufferedBytes: max(1, configuration.maximumBufferedBytes), backpressure: backpressure)
        let settings = URLSessionConfiguration.ephemeral
        settings.httpShouldSetCookies = false
        settings.httpCookieAcceptPolicy = .never
        settings.httpCookieStorage = nil
        settings.urlCache = nil
        settings.urlCredentialStorage = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.timeoutIntervalForRequest = Self.noTimeout
        settings.timeoutIntervalForResource = Self.noTimeout
        settings.httpMaximumConnectionsPerHost = max(1, configuration.maximumConnectionsPerHost)
        let queue = OperationQueue()
        queue.name = "Courier.URLSessionTransport.delegate"
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: settings, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // URLSession retains its delegate until it is invalidated. Running tasks are left to finish, so a response
        // still being read when the transport goes away is not cut off; the session then releases itself.
        isShutDown.withLock { isShutDown in
            if !isShutDown { session.finishTasksAndInvalidate() }
            isShutDown = true
        }
    }

    /// Sends the request; see ``Transport/send(_:)``.
    ///
    /// - Throws: ``CourierError``: `.cancelled` when the awaiting task is cancelled, `.fileOperationFailed` when the
    ///   temporary file for a streamed body cannot be written, the body's own error (as `.requestFailed`) when it
    ///   cannot be read, and the mapped `URLError` otherwise.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        request.securityPolicy.serverTrustHook = nil  // never called here: see SessionHooks.serverTrust
        #if !canImport(Darwin)
            // FoundationNetworking delivers no server-trust challenge: fail closed rather than ignore the policy.
            if request.url.scheme?.lowercased() == "https", !request.securityPolicy.isDefault {
                throw CourierError.requestFailed(
                    underlyingError: SecurityPolicyError.unsupportedByTransport("URLSessionTransport"),
                    context: CourierError.Context())
            }
        #endif
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Self.noTimeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers {
            let name = field.name.lowercased()
            guard name != "content-length", name != "transfer-encoding" else { continue }
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        var uploadFile: URL?
        if let body = request.body {
            if let data = body.data {
                urlRequest.httpBody = data
            } else {
                uploadFile = try await Self.writeTemporaryFile(body)
            }
        }
        let made: URLSessionTask? = isShutDown.withLock { isShutDown in
            guard !isShutDown else { return nil }
            let task: URLSessionTask
            if let uploadFile {
                task = session.uploadTask(with: urlRequest, fromFile: uploadFile)
            } else {
                task = session.dataTask(with: urlRequest)
            }
            delegate.register(
                task, url: request.url, bodyProgress: request.bodyProgress, uploadFile: uploadFile,
                securityPolicy: request.securityPolicy)
            return task
        }
        guard let task = made else {
            if let uploadFile { try? FileManager.default.removeItem(at: uploadFile) }
            throw CourierError.requestFailed(underlyingError: TransportShutDownError(), context: CourierError.Context())
        }
        let id = task.taskIdentifier
        let taskDelegate = delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                taskDelegate.start(id, head: continuation)
            }
        } onCancel: {
            taskDelegate.cancel(id)
        }
    }

    /// Cancels every running request and invalidates the session (`invalidateAndCancel`), waiting until URLSession
    /// reports that it is invalid. Requests sent afterwards fail with
    /// ``CourierError/requestFailed(underlyingError:context:)``.
    ///
    /// Cancelling rather than letting tasks finish (`finishTasksAndInvalidate`) is what ``NIOTransport`` does too:
    /// on both, an exchange still running fails with ``CourierError/cancelled(context:)``. A session that wants its
    /// tasks to finish waits for them before shutting the transport down.
    public func shutdown() async {
        let shouldInvalidate = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.waitForInvalidation(continuation)
            if shouldInvalidate { session.invalidateAndCancel() }
        }
    }

    /// Copies a streamed body into a new temporary file, chunk by chunk.
    private static func writeTemporaryFile(_ body: RequestBody) async throws -> URL {
        let (url, handle): (URL, FileHandle)
        do {
            (url, handle) = try TemporaryFiles.makeFile(prefix: "Courier-upload")
        } catch {
            throw CourierError.fileOperationFailed(
                reason: "The request body could not be written to a temporary file.", underlyingError: error,
                context: CourierError.Context())
        }
        do {
            defer { try? handle.close() }
            let chunks: DataChunks
            do {
                chunks = try body.makeChunks()
            } catch {
                throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
            }
            var iterator = chunks.makeAsyncIterator()
            while true {
                if Task.isCancelled { throw CourierError.cancelled(context: CourierError.Context()) }
                let chunk: Data?
                do {
                    chunk = try await iterator.next()
                } catch let error as CourierError {
                    throw error
                } catch {
                    throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
                }
                guard let chunk else { break }
                do {
                    try await BlockingIO.run { try handle.write(contentsOf: chunk) }
                } catch {
                    throw CourierError.fileOperationFailed(
                        reason: "The request body could not be written to a temporary file.", underlyingError: error,
                        context: CourierError.Context())
                }
            }
            return url
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// URLSession's errors as ``CourierError``s.
    static func courierError(_ error: any Error, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
        let context = CourierError.Context()
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return .requestFailed(underlyingError: error, context: context)
        }
        switch URLError.Code(rawValue: nsError.code) {
        case .cancelled:
            return .cancelled(context: context)
        case .timedOut:
            return .timedOut(context: context)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .cannotConnect(host: url.host ?? "", underlyingError: error, context: context)
        case .networkConnectionLost:
            return .connectionLost(underlyingError: error, context: context)
        case .badServerResponse:
            return .badServerResponse(
                reason: "the response is not valid HTTP", underlyingError: error, context: context)
        case .unsupportedURL where nsError.localizedDescription.contains("HTTP/0.9"):
            // Linux: libcurl's "Received HTTP/0.9 when not allowed", for a status line that is not HTTP.
            return .badServerResponse(
                reason: "the status line is not HTTP", underlyingError: error, context: context)
        case .badURL, .unsupportedURL:
            // libcurl also reports a status line it cannot read (a status code below 100, say) as an unsupported
            // protocol: for a URL that passes Courier's own check, the fault is the response's.
            if (try? URLCheck.validate(url, allowsUnixSockets: false)) != nil {
                return .badServerResponse(
                    reason: "the status line is not valid HTTP (\(nsError.localizedDescription))",
                    underlyingError: error,
                    context: context)
            }
            return .invalidURL(url.absoluteString)
        case .unknown where nsError.localizedDescription.hasPrefix("transfer closed with"):
            // Linux: libcurl's "transfer closed with N bytes remaining to read" (or "with outstanding read data
            // remaining" when chunked), for a body cut short by the server closing the connection, arrives as -1.
            return .connectionLost(underlyingError: error, context: context)
        case .httpTooManyRedirects:
            return .tooManyRedirects(context: context)
        case .cannotDecodeContentData, .cannotDecodeRawData:
            return .badServerResponse(
                reason: "the compressed (gzip or deflate) body is corrupt", underlyingError: error, context: context)
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid:
            return .serverTrustEvaluationFailed(host: url.host ?? "", reason: nsError.localizedDescription)
        default:
            return .requestFailed(underlyingError: error, context: context)
        }
    }
}

/// A response body was read by two iterations at once.
struct ConcurrentBodyReadError: Error, CustomStringConvertible {
    var description: String { "The response body is already being read by another iteration." }
}

/// The transport was shut down before the request was sent.
struct TransportShutDownError: Error, CustomStringConvertible {
    var description: String { "The transport has been shut down." }
}

// MARK: - Delegate

/// The one delegate of a ``URLSessionTransport``'s session: turns URLSession's callbacks into a response head and a
/// pulled body for each task.
///
/// `Sendable`: its only state is behind `Locked`, keyed by task identifier. Callbacks arrive on the session's serial
/// delegate queue; the consumer pulls from any thread. Continuations are resumed, and tasks suspended, resumed or
/// cancelled, after the lock is released.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// How a body that the consumer is not pulling is kept from filling memory.
    enum Backpressure: Sendable {
        /// Suspend the task and resume it once the consumer catches up (Apple platforms).
        case suspendTask
        /// Write the excess to an unlinked temporary file (Linux, where suspending restarts the request).
        case spillToFile
    }

    /// Transport-wide counters, for tests.
    struct Statistics: Sendable {
        /// The most bytes one task ever held in memory.
        var peakBufferedBytes = 0
        /// How many times a task was suspended for backpressure.
        var suspensions = 0
        /// How many bytes went through spill files.
        var spilledBytes: Int64 = 0
        /// How many interim (1xx) responses were skipped.
        var interimResponses = 0
        /// How many temporary files were made for request bodies, and the last one.
        var uploadFileCount = 0
        var lastUploadFile: URL?
    }

    let maximumBufferedBytes: Int
    let backpressure: Backpressure
    private let tasks = Locked<[Int: TaskState]>([:])
    private let invalidation = Locked<(isInvalid: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    let statistics = Locked(Statistics())

    /// How many tasks are being tracked (sent and not yet fully read, failed or dropped), for tests.
    var taskCount: Int { tasks.withLock { $0.count } }

    /// The chunk size used when reading back a spill file.
    private static let spillReadSize = 64 * 1024

    init(maximumBufferedBytes: Int, backpressure: Backpressure) {
        self.maximumBufferedBytes = maximumBufferedBytes
        self.backpressure = backpressure
    }

    /// Everything known about one task. Only touched under `tasks`' lock.
    private final class TaskState {
        let task: URLSessionTask
        let url: URL
        let bodyProgress: (@Sendable (Int64) -> Void)?
        let uploadFile: URL?
        /// Waiting for the response head; `nil` once it is delivered or the task failed.
        var head: CheckedContinuation<TransportResponse, any Error>?
        var headDelivered = false
        /// Cancelled from the Swift side (or the body was dropped): nothing more is delivered.
        var isCancelled = false
        /// Received body bytes not yet pulled, in order, before anything in `spill`.
        var chunks: [Data] = []
        var chunkIndex = 0
        var bufferedBytes = 0
        var isSuspended = false
        var spill: SpillFile?
        var spillWritten: Int64 = 0
        var spillRead: Int64 = 0
        /// The consumer waiting for the next chunk.
        var waiter: CheckedContinuation<Data?, any Error>?
        /// Set when the task completes.
        var outcome: Result<Void, CourierError>?
        /// An authentication challenge ended the task: its cancellation is the end of the (lost) body.
        var endedByChallenge = false
        /// The policy the server's chain must pass (Apple platforms; Linux refuses non-default policies earlier).
        var securityPolicy = SecurityPolicy.default
        /// Set when the server failed ``securityPolicy``: the task's error, instead of the cancellation.
        var trustFailure: CourierError?

        init(task: URLSessionTask, url: URL, bodyProgress: (@Sendable (Int64) -> Void)?, uploadFile: URL?) {
            self.task = task
            self.url = url
            self.bodyProgress = bodyProgress
            self.uploadFile = uploadFile
        }

        var hasBufferedChunk: Bool { chunkIndex < chunks.count }

        func popChunk() -> Data {
            let chunk = chunks[chunkIndex]
            chunkIndex += 1
            if chunkIndex == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                chunkIndex = 0
            }
            bufferedBytes -= chunk.count
            return chunk
        }
    }

    // MARK: Called by the transport and the body

    /// Records a task before it is resumed.
    func register(
        _ task: URLSessionTask, url: URL, bodyProgress: (@Sendable (Int64) -> Void)?, uploadFile: URL?,
        securityPolicy: SecurityPolicy = .default
    ) {
        let state = TaskState(task: task, url: url, bodyProgress: bodyProgress, uploadFile: uploadFile)
        state.securityPolicy = securityPolicy
        tasks.withLock { $0[task.taskIdentifier] = state }
        if let uploadFile {
            statistics.withLock {
                $0.uploadFileCount += 1
                $0.lastUploadFile = uploadFile
            }
        }
    }

    /// Resumes the task, to be answered through `head`; a task already cancelled is dropped instead.
    func start(_ id: Int, head: CheckedContinuation<TransportResponse, any Error>) {
        let (task, droppedUpload): (URLSessionTask?, URL?) = tasks.withLock { tasks in
            guard let state = tasks[id] else { return (nil, nil) }
            if state.isCancelled {
                tasks[id] = nil
                return (nil, state.uploadFile)
            }
            state.head = head
            return (state.task, nil)
        }
        if let task {
            task.resume()
        } else {
            if let droppedUpload { try? FileManager.default.removeItem(at: droppedUpload) }
            head.resume(throwing: CourierError.cancelled(context: CourierError.Context()))
        }
    }

    /// Cancels the task from the Swift side: whoever waits gets ``CourierError/cancelled(context:)`` now, and the
    /// body, if it is read again, throws the same.
    func cancel(_ id: Int) {
        typealias Found = (
            task: URLSessionTask?, head: CheckedContinuation<TransportResponse, any Error>?,
            waiter: CheckedContinuation<Data?, any Error>?
        )
        let found: Found? = tasks.withLock { tasks in
            guard let state = tasks[id], !state.isCancelled else { return nil }
            state.isCancelled = true
            let found = (state.outcome == nil ? state.task : nil, state.head, state.waiter)
            state.head = nil
            state.waiter = nil
            state.chunks = []
            state.chunkIndex = 0
            state.bufferedBytes = 0
            state.spill = nil
            return found
        }
        guard let found else { return }
        let error = CourierError.cancelled(context: CourierError.Context())
        found.head?.resume(throwing: error)
        found.waiter?.resume(throwing: error)
        found.task?.cancel()
    }

    /// The body was released: stop the task if it is still running and forget it.
    func discard(_ id: Int) {
        let task: URLSessionTask? = tasks.withLock { tasks in
            guard let state = tasks[id] else { return nil }
            if state.outcome != nil {
                tasks[id] = nil
                return nil
            }
            state.isCancelled = true
            state.chunks = []
            state.chunkIndex = 0
            state.bufferedBytes = 0
            state.spill = nil
            return state.task
        }
        task?.cancel()
    }

    /// The next body chunk of task `id`, `nil` at the end.
    func next(_ id: Int) async throws -> Data? {
        if Task.isCancelled {
            cancel(id)
            throw CourierError.cancelled(context: CourierError.Context())
        }
        if let ready = try takeReadyChunk(id, waiter: nil) { return ready }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                do {
                    if let ready = try takeReadyChunk(id, waiter: continuation) {
                        continuation.resume(returning: ready)
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            cancel(id)
        }
    }

    /// A chunk, the end (`.some(nil)`) or an error when one is available; otherwise registers `waiter` (when given)
    /// and returns `nil`.
    private func takeReadyChunk(_ id: Int, waiter: CheckedContinuation<Data?, any Error>?) throws -> Data?? {
        enum Step {
            case chunk(Data, resume: URLSessionTask?)
            case spill(SpillFile, offset: Int64, count: Int)
            case end(Result<Void, CourierError>)
            case wait
        }
        let limit = maximumBufferedBytes
        let step: Step = tasks.withLock { tasks in
            guard let state = tasks[id] else { return .end(.success(())) }
            if state.isCancelled {
                return .end(.failure(.cancelled(context: CourierError.Context())))
            }
            if state.hasBufferedChunk {
                let chunk = state.popChunk()
                var resume: URLSessionTask?
                if state.isSuspended && state.bufferedBytes <= limit / 2 {
                    state.isSuspended = false
                    resume = state.task
                }
                return .chunk(chunk, resume: resume)
            }
            if let spill = state.spill, state.spillRead < state.spillWritten {
                let count = Int(min(Int64(Self.spillReadSize), state.spillWritten - state.spillRead))
                let offset = state.spillRead
                state.spillRead += Int64(count)
                return .spill(spill, offset: offset, count: count)
            }
            if let outcome = state.outcome {
                tasks[id] = nil
                return .end(outcome)
            }
            if let waiter {
                // One reader at a time: a second one would strand the first.
                guard state.waiter == nil else {
                    return .end(
                        .failure(
                            .requestFailed(underlyingError: ConcurrentBodyReadError(), context: CourierError.Context()))
                    )
                }
                state.waiter = waiter
            }
            return .wait
        }
        switch step {
        case .chunk(let chunk, let task):
            task?.resume()
            return .some(chunk)
        case .spill(let file, let offset, let count):
            do {
                return .some(try file.read(count: count, at: offset))
            } catch {
                cancel(id)
                throw CourierError.fileOperationFailed(
                    reason: "The response body could not be read back from its buffer file.", underlyingError: error,
                    context: CourierError.Context())
            }
        case .end(let outcome):
            try outcome.get()
            return .some(nil)
        case .wait:
            return nil
        }
    }

    /// Resumes `continuation` once the session has become invalid.
    func waitForInvalidation(_ continuation: CheckedContinuation<Void, Never>) {
        let isInvalid = invalidation.withLock { state in
            if !state.isInvalid { state.waiters.append(continuation) }
            return state.isInvalid
        }
        if isInvalid { continuation.resume() }
    }

    // MARK: URLSession callbacks

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let waiters = invalidation.withLock { state in
            state.isInvalid = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Deliver the 3xx itself: the session follows redirects.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let progress = tasks.withLock { $0[task.taskIdentifier]?.bodyProgress }
        progress?(totalBytesSent)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        guard let http = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            let head = tasks.withLock { tasks -> CheckedContinuation<TransportResponse, any Error>? in
                defer { tasks[id]?.head = nil }
                return tasks[id]?.head
            }
            head?.resume(
                throwing: CourierError.badServerResponse(
                    reason: "the response is not HTTP", underlyingError: nil, context: CourierError.Context()))
            return
        }
        // On Linux an interim `100 Continue` arrives here as if it were the response; the real one follows.
        if (100..<200).contains(http.statusCode) && http.statusCode != 101 {
            statistics.withLock { $0.interimResponses += 1 }
            completionHandler(.allow)
            return
        }
        let found: (CheckedContinuation<TransportResponse, any Error>, URL)? = tasks.withLock { tasks in
            guard let state = tasks[id], !state.isCancelled, let head = state.head else { return nil }
            state.head = nil
            state.headDelivered = true
            return (head, state.url)
        }
        guard let (head, requestURL) = found else {
            completionHandler(.cancel)
            return
        }
        var headers = HTTPHeaders()
        let fields = http.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? String(describing: value))
        }
        for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            headers.add(name: name, value: value)
        }
        let body = ResponseBody(id: id, delegate: self)
        let transportResponse = TransportResponse(
            statusCode: http.statusCode, headers: headers, url: http.url ?? requestURL, httpVersion: "HTTP/1.1",
            body: DataChunks(makeNext: { { try await body.next() } }))
        completionHandler(.allow)
        head.resume(returning: transportResponse)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        enum Step {
            case none
            case deliver(CheckedContinuation<Data?, any Error>)
            case suspend(URLSessionTask)
            case spill(SpillFile, offset: Int64)
            case fail(URLSessionTask, any Error)
        }
        let id = dataTask.taskIdentifier
        let limit = maximumBufferedBytes
        let backpressure = self.backpressure
        var peak = 0
        let step: Step = tasks.withLock { tasks in
            guard let state = tasks[id], !state.isCancelled, state.outcome == nil else { return .none }
            if let waiter = state.waiter {
                // The consumer has read everything before this chunk.
                state.waiter = nil
                return .deliver(waiter)
            }
            switch backpressure {
            case .suspendTask:
                state.chunks.append(data)
                state.bufferedBytes += data.count
                peak = state.bufferedBytes
                if state.bufferedBytes > limit && !state.isSuspended {
                    state.isSuspended = true
                    return .suspend(state.task)
                }
                return .none
            case .spillToFile:
                if state.spill == nil && state.bufferedBytes + data.count <= limit {
                    state.chunks.append(data)
                    state.bufferedBytes += data.count
                    peak = state.bufferedBytes
                    return .none
                }
                if state.spill == nil {
                    do {
                        state.spill = try SpillFile()
                    } catch {
                        state.isCancelled = true
                        return .fail(state.task, error)
                    }
                }
                guard let spill = state.spill else { return .none }
                return .spill(spill, offset: state.spillWritten)
            }
        }
        if peak > 0 { statistics.withLock { $0.peakBufferedBytes = max($0.peakBufferedBytes, peak) } }
        switch step {
        case .none:
            break
        case .deliver(let waiter):
            waiter.resume(returning: data)
        case .suspend(let task):
            statistics.withLock { $0.suspensions += 1 }
            task.suspend()
        case .spill(let file, let offset):
            do {
                try file.write(data, at: offset)
            } catch {
                failBody(id, error: error)
                return
            }
            statistics.withLock { $0.spilledBytes += Int64(data.count) }
            // Commit: only now may the consumer read these bytes.
            let waiter: CheckedContinuation<Data?, any Error>? = tasks.withLock { tasks in
                guard let state = tasks[id], state.spill === file else { return nil }
                state.spillWritten += Int64(data.count)
                guard let waiter = state.waiter else { return nil }
                state.waiter = nil
                state.spillRead = state.spillWritten
                return waiter
            }
            waiter?.resume(returning: data)
        case .fail(let task, let error):
            task.cancel()
            failWaiter(id, error: error)
        }
    }

    /// A spill write failed: cancel the task and fail the consumer.
    private func failBody(_ id: Int, error: any Error) {
        let task: URLSessionTask? = tasks.withLock { tasks in
            guard let state = tasks[id] else { return nil }
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
        failWaiter(id, error: error)
    }

    private func failWaiter(_ id: Int, error: any Error) {
        let waiter: CheckedContinuation<Data?, any Error>? = tasks.withLock { tasks in
            defer { tasks[id]?.waiter = nil }
            return tasks[id]?.waiter
        }
        waiter?.resume(
            throwing: CourierError.fileOperationFailed(
                reason: "The response body could not be buffered to a file.", underlyingError: error,
                context: CourierError.Context()))
    }

    /// FoundationNetworking on Linux delivers a `401` head and then a challenge; default handling never completes
    /// the task and any other answer cancels it, losing the body. Courier answers challenges itself (the session
    /// retries with credentials), so the task is ended here and its `401` delivered with an empty body.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let method = challenge.protectionSpace.authenticationMethod
        #if canImport(Darwin)
            if method == NSURLAuthenticationMethodServerTrust, let serverTrust = challenge.protectionSpace.serverTrust {
                let policy = tasks.withLock { $0[task.taskIdentifier]?.securityPolicy } ?? .default
                guard !policy.isDefault else {
                    completionHandler(.performDefaultHandling, nil)
                    return
                }
                let host = challenge.protectionSpace.host
                let evaluation = policy.evaluation(of: serverTrust, forDomain: host)
                if evaluation.isTrusted {
                    completionHandler(.useCredential, URLCredential(trust: serverTrust))
                } else {
                    tasks.withLock {
                        $0[task.taskIdentifier]?.trustFailure = .serverTrustEvaluationFailed(
                            host: host, reason: evaluation.reason)
                    }
                    completionHandler(.cancelAuthenticationChallenge, nil)
                }
                return
            }
        #endif
        guard
            method == NSURLAuthenticationMethodHTTPBasic || method == NSURLAuthenticationMethodHTTPDigest
                || method == NSURLAuthenticationMethodDefault
        else {
            completionHandler(.performDefaultHandling, nil)  // e.g. server trust on Apple platforms
            return
        }
        tasks.withLock { $0[task.taskIdentifier]?.endedByChallenge = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        typealias Found = (
            outcome: Result<Void, CourierError>,
            head: CheckedContinuation<TransportResponse, any Error>?, waiter: CheckedContinuation<Data?, any Error>?
        )
        let id = task.taskIdentifier
        // Deleted before anyone can learn that the task is over.
        if let file = tasks.withLock({ $0[id]?.uploadFile }) { try? FileManager.default.removeItem(at: file) }
        let found: Found? = tasks.withLock { tasks in
            guard let state = tasks[id] else { return nil }
            let outcome: Result<Void, CourierError>
            if let trustFailure = state.trustFailure {
                outcome = .failure(trustFailure)
            } else if state.endedByChallenge && state.headDelivered {
                outcome = .success(())
            } else {
                outcome = error.map { .failure(URLSessionTransport.courierError($0, url: state.url)) } ?? .success(())
            }
            state.outcome = outcome
            let head = state.head
            let waiter = state.waiter
            state.head = nil
            state.waiter = nil
            // Kept only while a consumer still has buffered bytes to read; a waiting consumer has read them all.
            if state.isCancelled || !state.headDelivered || waiter != nil { tasks[id] = nil }
            return (outcome, head, waiter)
        }
        guard let found else { return }
        switch found.outcome {
        case .failure(let error):
            found.head?.resume(throwing: error)
            found.waiter?.resume(throwing: error)
        case .success:
            found.head?.resume(
                throwing: CourierError.badServerResponse(
                    reason: "the task completed without a response", underlyingError: nil,
                    context: CourierError.Context()))
            found.waiter?.resume(returning: nil)
        }
    }
}

/// A response body being read: releasing it cancels a download nobody will read.
private final class ResponseBody: Sendable {
    let id: Int
    let delegate: URLSessionTransportDelegate

    init(id: Int, delegate: URLSessionTransportDelegate) {
        self.id = id
        self.delegate = delegate
    }

    func next() async throws -> Data? {
        try await delegate.next(id)
    }

    deinit {
        delegate.discard(id)
    }
}

/// A temporary file holding response bytes the consumer has not pulled yet; unlinked as soon as it is made, so it
/// disappears when the last reference closes it, whatever happens to the process.
///
/// `Sendable`: the descriptor never changes, and `pread`/`pwrite` take explicit offsets, so the writer (the delegate
/// queue) and the reader (the consumer) never share a file position; the delegate only lets the reader read bytes
/// already written.
private final class SpillFile: Sendable {
    private let descriptor: Int32

    init() throws {
        let directory = TemporaryFiles.directory ?? FileManager.default.temporaryDirectory
        let path = directory.appendingPathComponent("Courier-body-XXXXXX").path
        var template = Array(path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            let descriptor = mkstemp(base)
            if descriptor >= 0 { unlink(base) }
            return descriptor
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func write(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            var written = 0
            while written < buffer.count {
                let result = pwrite(descriptor, base + written, buffer.count - written, off_t(offset) + off_t(written))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                written += result
            }
        }
    }

    func read(count: Int, at offset: Int64) throws -> Data {
        var data = Data(count: count)
        let read = try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var read = 0
            while read < count {
                let result = pread(descriptor, base + read, count - read, off_t(offset) + off_t(read))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                if result == 0 { break }
                read += result
            }
            return read
        }
        guard read == count else { throw POSIXError(.EIO) }
        return data
    }
}
