import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
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
/// - It joins repeated response fields into one value with `, ` (two `Set-Cookie` arrive as one `a=1, b=2`; this
///   transport splits `Set-Cookie` again where a `, ` is followed by `name=`, see the Cookies article), and it
///   does not report the HTTP version: ``TransportResponse/httpVersion`` is always `HTTP/1.1`, even over HTTP/2.
/// - It picks proxies itself, and no request can choose another: on Linux libcurl reads `http_proxy`, `https_proxy`,
///   `all_proxy` and `no_proxy` (and ignores `connectionProxyDictionary`, measured); on Apple platforms the system's
///   proxy settings apply. So a request whose ``TransportRequest/proxy`` is not the one the environment gives it
///   (on Linux), or that names any proxy (on Apple platforms), fails with
///   ``CourierError/unsupportedURL(_:reason:context:)`` rather than going another way; with the default
///   ``SessionConfiguration/proxy`` (the environment's) requests go through as libcurl routes them.
/// - It negotiates HTTP/2 over TLS whenever the server offers it, with no switch to stop it: an `https` request that
///   asks for ``HTTPVersionPolicy/http1Only`` fails with ``CourierError/unsupportedURL(_:reason:context:)``.
///
/// Bodies: a ``HTTPRequestBody/data`` body is sent from memory as `httpBody`. Any other body (a file, a stream) is first
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
/// - libcurl sends a request again on a new connection when the kept-alive one it reused closes before any byte of
///   an answer (a server's keep-alive timeout expiring as the request arrives), but FoundationNetworking cannot send
///   a data or file body again: that attempt would announce the whole `Content-Length`, send none of the body, and
///   wait for an answer without end. This transport cancels that attempt and sends the request again itself, once,
///   for an idempotent method (as ``NIOTransport`` does); any other method fails with
///   ``CourierError/connectionLost(underlyingError:context:)``, for the session's retrier to decide.
/// - **A hostile server can crash the process.** FoundationNetworking traps, inside libcurl's callbacks and before
///   any delegate runs, on a head cut off after its first line break ("Transfer completed, but there's no
///   response") and on a `Content-Length` of 2^63 − 512 or more. Use this transport on Linux only with servers you
///   trust (see SECURITY.md).
/// - **A head of many lines holds up every `URLSession` of the process.** FoundationNetworking reads a response head
///   in time that grows with the square of its number of lines, on one serial queue that every `URLSession` of the
///   process shares. Measured: 5,000 lines 0.5 s, 10,000 lines 2.0 s, 20,000 lines 7.4 s; 40,000 lines (430 KB)
///   failed after 11.7 s. Meanwhile a request of another session to a closed port waited as long instead of failing
///   at once, and cancelling the task did not end it sooner. This transport makes and resumes its tasks, which wait
///   for that queue, on a queue of its own, so Swift concurrency's threads never wait there; a request cancelled, or
///   timed out by its session, while its task waits to be made ends at once and is never sent.
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
    let isShutDown = Locked(false)

    /// The request and resource timeout: effectively none, but small enough for libcurl's millisecond arithmetic.
    static let noTimeout: TimeInterval = 7 * 24 * 60 * 60

    /// Creates a transport with its own `URLSession`.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(session: .ephemeral, configuration: configuration)
    }

    /// Creates a transport whose `URLSession` starts from `sessionConfiguration`, so that what it carries reaches
    /// every request: its `protocolClasses` (a `URLProtocol`-based stubbing tool's, say), `httpAdditionalHeaders`,
    /// `connectionProxyDictionary`, TLS and cellular settings. What the session layer owns is still turned off in
    /// the copy the transport makes (cookies, the URL cache, stored credentials, URLSession's own timeouts), so the
    /// session's rules apply as on every transport; `sessionConfiguration` itself is not changed.
    ///
    /// - Parameters:
    ///   - sessionConfiguration: the `URLSessionConfiguration` to start from.
    ///   - transportConfiguration: connections per host and buffering.
    public convenience init(
        configuration sessionConfiguration: URLSessionConfiguration,
        transportConfiguration: Configuration = Configuration()
    ) {
        // A copy, so the caller's object is never changed or shared.
        let settings = sessionConfiguration.copy() as? URLSessionConfiguration ?? .ephemeral
        self.init(session: settings, configuration: transportConfiguration)
    }

    private init(session settings: URLSessionConfiguration, configuration: Configuration) {
        self.configuration = configuration
        #if canImport(FoundationNetworking)
            let backpressure = URLSessionTransportDelegate.Backpressure.spillToFile
        #else
            let backpressure = URLSessionTransportDelegate.Backpressure.suspendTask
        #endif
        delegate = URLSessionTransportDelegate(
            maximumBufferedBytes: max(1, configuration.maximumBufferedBytes), backpressure: backpressure)
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

    /// Fails a request that asks for a proxy other than the one URLSession will use (see ``URLSessionTransport``).
    static func checkProxy(of request: TransportRequest) throws {
        #if canImport(Darwin)
            let routed: Proxy? = nil
        #else
            let routed = try? ProxySettings.environment()?.proxy(for: request.url)
        #endif
        guard request.proxy != routed else { return }
        let wanted = request.proxy.map { "through \($0)" } ?? "directly"
        let actual = routed.map { "through \($0), as the environment says" } ?? "directly or as the system says"
        throw CourierError.unsupportedURL(
            request.url,
            reason: "URLSessionTransport cannot send it \(wanted): URLSession would send it \(actual); "
                + "use NIOTransport to choose the proxy per request", context: CourierError.Context())
    }

    /// Sends the request; see ``Transport/send(_:)``.
    ///
    /// - Throws: ``CourierError``: `.cancelled` when the awaiting task is cancelled, `.fileOperationFailed` when the
    ///   temporary file for a streamed body cannot be written, the body's own error (as `.requestFailed`) when it
    ///   cannot be read, and the mapped `URLError` otherwise.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        let fetchStart = Date()
        #if !canImport(Darwin)
            // Linux's URLSession shows no chain, so no hook can be asked (see SessionHooks.serverTrust); on Apple
            // platforms the delegate asks it in the server-trust challenge.
            request.securityPolicy.serverTrustHook = nil
        #endif
        try Self.checkProxy(of: request)
        if request.httpVersion == .http1Only, request.url.scheme?.lowercased() == "https" {
            throw CourierError.unsupportedURL(
                request.url,
                reason: "URLSessionTransport cannot keep HTTPS to HTTP/1.1 (URLSession negotiates HTTP/2 on its own); "
                    + "use NIOTransport", context: CourierError.Context())
        }
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
        let requestStart = Date()
        var response: TransportResponse
        var resent = false
        while true {
            do {
                response = try await exchange(urlRequest, uploadFile: uploadFile, request: request)
                break
            } catch let error as CourierError where Self.isBodyNotResent(error) {
                // The delegate left the body's file for this decision (see `URLSessionBodyNotResentError`): once,
                // and for an idempotent method only, the request goes out again from the start, as NIOTransport
                // sends one lost on a stale connection again.
                guard !resent, NIOTransport.mayRetryOnAnotherConnection(method: request.method), !Task.isCancelled
                else {
                    if let uploadFile { try? FileManager.default.removeItem(at: uploadFile) }
                    if Task.isCancelled { throw CourierError.cancelled(context: CourierError.Context()) }
                    throw error
                }
                resent = true
            }
        }
        // URLSession tells nothing of its connection (on Linux, `URLSessionTaskMetrics` never arrive): only the
        // dates seen from here.
        var metrics = TransactionMetrics(method: request.method, url: request.url)
        metrics.fetchStartDate = fetchStart
        metrics.requestStartDate = requestStart
        metrics.responseStartDate = Date()
        metrics.statusCode = response.statusCode
        response.metrics = metrics
        return response
    }

    /// One `URLSessionTask` for `urlRequest`, answered with its response head; the delegate deletes `uploadFile`
    /// when the task completes (unless the body was not resent, see ``isBodyNotResent(_:)``).
    private func exchange(_ urlRequest: URLRequest, uploadFile: URL?, request: TransportRequest) async throws
        -> TransportResponse
    {
        guard let task = try await madeTask(urlRequest, uploadFile: uploadFile, request: request) else {
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

    /// A registered task for `urlRequest`, or `nil` once the transport is shut down.
    func makeTask(_ urlRequest: URLRequest, uploadFile: URL?, request: TransportRequest) -> URLSessionTask? {
        isShutDown.withLock { isShutDown in
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
    }

    /// Whether the task failed because URLSession was sending the request again without its body.
    static func isBodyNotResent(_ error: CourierError) -> Bool {
        guard case .connectionLost(let underlying, _) = error else { return false }
        return underlying is URLSessionBodyNotResentError
    }

    /// Four times ``Configuration/maximumConnectionsPerHost``, and at least 128: a session hands this transport that
    /// many tasks of one origin at once and keeps the rest waiting, cheaply, until one is done.
    public var maximumExchangesPerOrigin: Int? {
        Self.exchangeBound(connectionsPerHost: configuration.maximumConnectionsPerHost)
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
            // On the control queue, after the tasks already being made there.
            if shouldInvalidate { delegate.control.async { self.session.invalidateAndCancel() } }
        }
    }

    /// Copies a streamed body into a new temporary file, chunk by chunk.
    private static func writeTemporaryFile(_ body: HTTPRequestBody) async throws -> URL {
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
}
