import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one delegate of a ``URLSessionTransport``'s session: turns URLSession's callbacks into a response head and a
/// pulled body for each task.
///
/// `Sendable`: its only state is behind `Locked`, keyed by task identifier, and each task's rules are a
/// ``URLSessionTaskStateMachine``. Callbacks arrive on the session's serial delegate queue; the consumer pulls from
/// any thread. Continuations are resumed, and tasks suspended, resumed or cancelled, after the lock is released.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias Backpressure = URLSessionBackpressure
    typealias Machine = URLSessionTaskStateMachine<
        CheckedContinuation<TransportResponse, any Error>, CheckedContinuation<Data?, any Error>, SpillFile
    >

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
        /// How many attempts were cancelled because URLSession was sending them again without their body.
        var bodiesNotResent = 0
    }

    let maximumBufferedBytes: Int
    let backpressure: Backpressure
    private let tasks = Locked<[Int: Entry]>([:])
    private let invalidation = Locked<(isInvalid: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    let statistics = Locked(Statistics())

    /// How many tasks are being tracked (sent and not yet fully read, failed or dropped), for tests.
    var taskCount: Int { tasks.withLock { $0.count } }

    /// Where tasks are made, resumed, suspended and cancelled. swift-corelibs-foundation does each of these
    /// synchronously on the session's work queue, which can stay busy for long with other tasks' bytes; a thread of
    /// Swift's cooperative pool must not wait there: on Linux the pool is Dispatch's global queue, as wide as the
    /// machine has cores, and a blocked thread is replaced late, so every task of the app would wait. A queue of its
    /// own (serial, so the calls keep the order they were made in) waits instead.
    let control = DispatchQueue(label: "Courier.URLSessionTransport.control")

    /// Calls `call` with `task` on ``control``, without waiting.
    private func onControl(_ task: URLSessionTask, _ call: @escaping @Sendable (URLSessionTask) -> Void) {
        control.async { call(task) }
    }

    init(maximumBufferedBytes: Int, backpressure: Backpressure) {
        self.maximumBufferedBytes = maximumBufferedBytes
        self.backpressure = backpressure
    }

    /// One task: what the transport gave it, and its state machine. Only touched under `tasks`' lock.
    private final class Entry {
        let task: URLSessionTask
        let url: URL
        let bodyProgress: (@Sendable (Int64) -> Void)?
        let uploadFile: URL?
        /// The policy the server's chain must pass (Apple platforms; Linux refuses non-default policies earlier).
        let securityPolicy: SecurityPolicy
        var machine: Machine
        /// Interim (1xx) heads so far.
        var interimResponses = 0

        init(
            task: URLSessionTask, url: URL, bodyProgress: (@Sendable (Int64) -> Void)?, uploadFile: URL?,
            securityPolicy: SecurityPolicy, machine: Machine
        ) {
            self.task = task
            self.url = url
            self.bodyProgress = bodyProgress
            self.uploadFile = uploadFile
            self.securityPolicy = securityPolicy
            self.machine = machine
        }
    }

    // MARK: Called by the transport and the body

    /// Records a task before it is resumed.
    func register(
        _ task: URLSessionTask, url: URL, bodyProgress: (@Sendable (Int64) -> Void)?, uploadFile: URL?,
        securityPolicy: SecurityPolicy = .default
    ) {
        let entry = Entry(
            task: task, url: url, bodyProgress: bodyProgress, uploadFile: uploadFile, securityPolicy: securityPolicy,
            machine: Machine(maximumBufferedBytes: maximumBufferedBytes, backpressure: backpressure))
        tasks.withLock { $0[task.taskIdentifier] = entry }
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
            guard let entry = tasks[id] else { return (nil, nil) }
            switch entry.machine.start(head: head) {
            case .resumeTask:
                return (entry.task, nil)
            case .failCancelled:
                tasks[id] = nil
                return (nil, entry.uploadFile)
            }
        }
        if let task {
            onControl(task) { $0.resume() }
        } else {
            if let droppedUpload { try? FileManager.default.removeItem(at: droppedUpload) }
            head.resume(throwing: CourierError.cancelled(context: CourierError.Context()))
        }
    }

    /// Cancels the task from the Swift side: whoever waits gets ``CourierError/cancelled(context:)`` now, and the
    /// body, if it is read again, throws the same.
    func cancel(_ id: Int) {
        let found: (URLSessionTask, Machine.CancelAction)? = tasks.withLock { tasks in
            guard let entry = tasks[id], let action = entry.machine.cancel() else { return nil }
            return (entry.task, action)
        }
        guard let (task, action) = found else { return }
        let error = CourierError.cancelled(context: CourierError.Context())
        action.head?.resume(throwing: error)
        action.waiter?.resume(throwing: error)
        if action.cancelTask { onControl(task) { $0.cancel() } }
    }

    /// Forgets task `id`, made for a caller that stopped waiting before it started: the `URLSessionTask` is cancelled
    /// without a byte sent, and its upload file deleted.
    func abandon(_ id: Int) {
        cancel(id)
        let uploadFile = tasks.withLock { $0.removeValue(forKey: id)?.uploadFile }
        if let uploadFile { try? FileManager.default.removeItem(at: uploadFile) }
    }

    /// The body was released: stop the task if it is still running and forget it.
    func discard(_ id: Int) {
        let task: URLSessionTask? = tasks.withLock { tasks in
            guard let entry = tasks[id] else { return nil }
            switch entry.machine.discard() {
            case .forget:
                tasks[id] = nil
                return nil
            case .cancelTask:
                return entry.task
            }
        }
        if let task { onControl(task) { $0.cancel() } }
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
        let found: (URLSessionTask, Machine.ReadAction)? = tasks.withLock { tasks in
            guard let entry = tasks[id] else { return nil }
            let action = entry.machine.read(waiter: waiter)
            if case .end(_, forget: true) = action { tasks[id] = nil }
            return (entry.task, action)
        }
        guard let (task, action) = found else { return .some(nil) }
        switch action {
        case .chunk(let chunk, let resumeTask):
            if resumeTask { onControl(task) { $0.resume() } }
            return .some(chunk)
        case .readSpill(let file, let offset, let count):
            do {
                return .some(try file.read(count: count, at: offset))
            } catch {
                cancel(id)
                throw CourierError.fileOperationFailed(
                    reason: "The response body could not be read back from its buffer file.", underlyingError: error,
                    context: CourierError.Context())
            }
        case .end(let outcome, _):
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
            return refuse(id, reason: "the response is not HTTP", completionHandler: completionHandler)
        }
        // No request of this transport asks for an upgrade: what follows a 101 is another protocol.
        if http.statusCode == 101 {
            return refuse(id, reason: InterimResponses.switchingProtocols, completionHandler: completionHandler)
        }
        // On Linux an interim `100 Continue` arrives here as if it were the response; the real one follows, unless
        // a server sends them without end.
        if (100..<200).contains(http.statusCode) {
            statistics.withLock { $0.interimResponses += 1 }
            let count = tasks.withLock { tasks -> Int in
                tasks[id]?.interimResponses += 1
                return tasks[id]?.interimResponses ?? 0
            }
            guard count > InterimResponses.maximumCount else {
                completionHandler(.allow)
                return
            }
            return refuse(id, reason: InterimResponses.tooMany, completionHandler: completionHandler)
        }
        let headers = Self.headers(of: http)
        // libcurl passes a lone CR (and FoundationNetworking whatever it gets) into a value; NIO's parser refuses
        // both, and no caller should get a field that could end a line where it is written out again.
        let breaksLines = { (text: String) in text.utf8.contains { $0 == 0 || $0 == 10 || $0 == 13 } }
        if headers.contains(where: { breaksLines($0.name) || breaksLines($0.value) }) {
            return refuse(
                id, reason: "a header field holds a line break or a NUL byte", completionHandler: completionHandler)
        }
        let found: (CheckedContinuation<TransportResponse, any Error>, URL)? = tasks.withLock { tasks in
            guard let entry = tasks[id], case .deliver(let head) = entry.machine.receivedHead() else { return nil }
            return (head, entry.url)
        }
        guard let (head, requestURL) = found else {
            completionHandler(.cancel)
            return
        }
        let body = URLSessionResponseBody(id: id, delegate: self)
        let transportResponse = TransportResponse(
            statusCode: http.statusCode, headers: headers, url: http.url ?? requestURL,
            httpVersion: "HTTP/1.1", body: DataChunks(makeNext: { { try await body.next() } }))
        completionHandler(.allow)
        head.resume(returning: transportResponse)
    }

    /// Cancels the task for a head it cannot deliver and fails whoever waits for the head with `reason`.
    private func refuse(
        _ id: Int, reason: String, completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(.cancel)
        let head = tasks.withLock { $0[id]?.machine.failHead() }
        head?.resume(
            throwing: CourierError.badServerResponse(
                reason: reason, underlyingError: nil, context: CourierError.Context()))
    }

    /// The response's fields in a stable order (URLSession hands them over as a dictionary).
    private static func headers(of response: HTTPURLResponse) -> HTTPHeaderFields {
        var headers = HTTPHeaderFields()
        let fields = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? String(describing: value))
        }
        for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            if name.caseInsensitiveEquals("Set-Cookie") {
                // URLSession joined the fields with ", "; each cookie must be read on its own.
                for cookie in SetCookie.splitJoined(value) { headers.add(name: name, value: cookie) }
            } else {
                headers.add(name: name, value: value)
            }
        }
        return headers
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let found: (URLSessionTask, Machine.DataAction, buffered: Int)? = tasks.withLock { tasks in
            guard let entry = tasks[id] else { return nil }
            let action = entry.machine.receivedData(data, makeSpill: { try SpillFile() })
            return (entry.task, action, entry.machine.bufferedBytes)
        }
        guard let (task, action, buffered) = found else { return }
        if buffered > 0 { statistics.withLock { $0.peakBufferedBytes = max($0.peakBufferedBytes, buffered) } }
        switch action {
        case .none:
            break
        case .deliver(let waiter):
            waiter.resume(returning: data)
        case .suspendTask:
            statistics.withLock { $0.suspensions += 1 }
            onControl(task) { $0.suspend() }
        case .writeSpill(let file, let offset):
            do {
                try file.write(data, at: offset)
            } catch {
                failBody(id, error: error)
                return
            }
            statistics.withLock { $0.spilledBytes += Int64(data.count) }
            let waiter = tasks.withLock { $0[id]?.machine.spillWritten(data.count, to: file) }
            waiter?.resume(returning: data)
        case .fail(let error):
            failBody(id, error: error)
        }
    }

    /// Buffering the body failed: cancel the task and fail the consumer.
    private func failBody(_ id: Int, error: any Error) {
        let found = tasks.withLock { tasks in tasks[id].map { ($0.task, $0.machine.failBody()) } }
        guard let (task, waiter) = found else { return }
        onControl(task) { $0.cancel() }
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
                        $0[task.taskIdentifier]?.machine.trustFailed(
                            .serverTrustEvaluationFailed(host: host, reason: evaluation.reason))
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
        tasks.withLock { $0[task.taskIdentifier]?.machine.challengeEndsTask() }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    #if canImport(FoundationNetworking)
        /// libcurl sends a request again, on a new connection, when the kept-alive connection it reused closed
        /// before any byte of an answer (a server's idle timeout closing it just as the request arrived); when body
        /// bytes had gone out, FoundationNetworking is asked to rewind the body, and asks for a new body stream here.
        /// It can rewind only a stream body: for a data or file body (all this transport sends) it reports the
        /// rewind done without rewinding, so the second attempt announces the whole `Content-Length` and sends only
        /// what was left of the body (none of it, measured), and the server waits for the rest without end. Handing
        /// it a stream instead traps (`fatalError`) for those bodies. So the attempt is cancelled here, and the task
        /// fails with ``URLSessionBodyNotResentError``; ``URLSessionTransport`` sends the request again itself.
        func urlSession(
            _ session: URLSession, task: URLSessionTask,
            needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
        ) {
            completionHandler(nil)
            let id = task.taskIdentifier
            let cancels = tasks.withLock { $0[id]?.machine.bodyNotResent() ?? false }
            guard cancels else { return }
            statistics.withLock { $0.bodiesNotResent += 1 }
            // Called inside libcurl's callback on the session's work queue, which `cancel()` enters synchronously.
            onControl(task) { $0.cancel() }
        }
    #endif

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        guard let (url, uploadFile) = tasks.withLock({ $0[id].map { ($0.url, $0.uploadFile) } }) else { return }
        // Mapped outside the lock that every consumer of every task takes.
        let mapped = error.map { URLSessionTransport.courierError($0, url: url) }
        let action: Machine.CompletionAction? = tasks.withLock { tasks in
            guard let entry = tasks[id] else { return nil }
            let action = entry.machine.complete(error: mapped)
            if action.forget { tasks[id] = nil }
            return action
        }
        // Deleted before anyone can learn that the task is over, unless the transport sends it again.
        if let uploadFile, action?.keepsUploadFile != true { try? FileManager.default.removeItem(at: uploadFile) }
        guard let action else { return }
        switch action.outcome {
        case .failure(let error):
            action.head?.resume(throwing: error)
            action.waiter?.resume(throwing: error)
        case .success:
            action.head?.resume(
                throwing: CourierError.badServerResponse(
                    reason: "the task completed without a response", underlyingError: nil,
                    context: CourierError.Context()))
            action.waiter?.resume(returning: nil)
        }
    }
}
