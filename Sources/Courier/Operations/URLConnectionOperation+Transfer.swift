import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One run of the operation's request: a session of its own, the body streamed or collected, the response checked
/// and the bytes kept (to memory, a stream or a file), progress reported.
extension URLConnectionOperation {
    func perform(run: Int) async {
        let request = store.withLock { $0.request }
        let manager = makeManager(run: run)
        let current = store.withLock { store -> Bool in
            guard store.run == run else { return false }
            store.manager = manager
            return true
        }
        guard current else { return }
        let failure: (any Error)?
        do {
            if store.withLock({ $0.outputStream != nil && $0.inputStream == nil && $0.body == nil }) {
                try await stream(request, on: manager, run: run)
            } else {
                try await collect(request, on: manager, run: run)
            }
            failure = nil
        } catch {
            failure = error
        }
        let ended = store.withLock { store -> Bool in
            guard store.run == run else { return false }
            store.manager = nil
            if let failure, store.error == nil { store.error = Self.courierError(failure, request: request) }
            return true
        }
        manager.invalidate(cancelingTasks: false)
        if ended { finish() }
    }

    /// The body to an output stream, pulled chunk by chunk: constant memory, whatever the size.
    func stream(_ request: URLRequest, on manager: SessionManager, run: Int) async throws {
        let streamed = try await manager.stream(request, acceptableStatusCodes: nil)
        let offset = try accept(streamed.response, run: run)
        let total = Self.expectedTotal(of: streamed.response, after: offset)
        for try await chunk in streamed.chunks {
            let kept = try keep(chunk, run: run)
            report(\.download, bytes: Int64(chunk.count), total: kept, expected: total)
        }
    }

    /// A data or upload task whose chunks are kept as they arrive (so a pause keeps them) and whose response may be
    /// cached.
    func collect(_ request: URLRequest, on manager: SessionManager, run: Int) async throws {
        let (set, input) = store.withLock { ($0.body, $0.inputStream) }
        let body =
            set
            ?? input.map { stream in
                HTTPRequestBody.stream(
                    InputStreamChunks(stream),
                    length: request.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init))
            }
        let expectedTotal = Locked(Int64(-1))
        var hooks = manager.hooks
        hooks.didReceiveResponse = { [weak self] _, response in
            guard let self, let offset = try? self.accept(response, run: run) else { return .cancel }
            expectedTotal.withLock { $0 = Self.expectedTotal(of: response, after: offset) }
            return .allow
        }
        hooks.didReceiveData = { [weak self] _, chunk in
            guard let self, let kept = try? self.keep(chunk, run: run) else { return }
            self.report(\.download, bytes: Int64(chunk.count), total: kept, expected: expectedTotal.value)
        }
        manager.hooks = hooks
        let error: (any Error)? = await withCheckedContinuation { continuation in
            let completion: TaskCompletionHandler = { _, _, error in continuation.resume(returning: error) }
            let task =
                if let body {
                    manager.uploadTask(with: request, body: body, completionHandler: completion) as SessionTask
                } else {
                    manager.dataTask(with: request, completionHandler: completion) as SessionTask
                }
            task.resume()
        }
        if let error { throw error }
    }

    /// A session for one run, with the operation's settings and blocks as its hooks.
    func makeManager(run: Int) -> SessionManager {
        let settings = store.withLock { ($0.credential, $0.securityPolicy, $0.urlCache, $0.blocks) }
        var configuration = SessionConfiguration.default
        configuration.credential = settings.0
        configuration.urlCache = settings.2
        let manager = SessionManager(configuration: configuration, transport: transport)
        try? manager.setSecurityPolicy(settings.1)  // a plain SessionManager never refuses a policy
        manager.completionQueue = DispatchQueue(label: "Courier.URLConnectionOperation.task")
        manager.responseSerializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        let blocks = settings.3
        var hooks = SessionHooks()
        if let redirect = blocks.redirect {
            hooks.willPerformRedirection = { [weak self] _, response, proposed in
                guard let self else { return proposed }
                return redirect(self, proposed, response)
            }
        }
        if let cacheResponse = blocks.cacheResponse {
            hooks.willCacheResponse = { [weak self] _, proposed in
                guard let self else { return proposed }
                return cacheResponse(self, proposed)
            }
        }
        hooks.authenticationChallenge = { [weak self] _, challenge in
            self?.answer(challenge) ?? .performDefaultHandling
        }
        hooks.didSendBodyData = { [weak self] _, bytes, total, expected in
            self?.report(\.upload, bytes: bytes, total: total, expected: expected)
        }
        manager.hooks = hooks
        return manager
    }

    /// The challenge block's answer; else the credential once (the session's default handling, which keeps it
    /// to the request's origin), or the credential storage's default for the challenge's own protection space.
    func answer(_ challenge: AuthenticationChallenge) -> AuthenticationDisposition {
        let (block, credential, usesStorage) = store.withLock {
            ($0.blocks.challenge, $0.credential, $0.shouldUseCredentialStorage)
        }
        if let block { return block(self, challenge) }
        if credential != nil { return .performDefaultHandling }
        guard challenge.previousFailureCount == 0 else { return .rejectProtectionSpace }
        if usesStorage, let url = challenge.response.url, let host = url.host {
            let space = URLProtectionSpace(
                host: host, port: url.port ?? (url.scheme == "https" ? 443 : 80), protocol: url.scheme,
                realm: challenge.realm,
                authenticationMethod: challenge.scheme.caseInsensitiveEquals("digest")
                    ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic)
            if let stored = URLCredentialStorage.shared.defaultCredential(for: space), let user = stored.user,
                let password = stored.password
            {
                return .useCredential(Credential(user: user, password: password))
            }
        }
        return .rejectProtectionSpace
    }

    /// Takes a response head: a `206` to a ranged resume continues after the bytes kept; anything else starts the
    /// body again from zero. Returns where the body continues.
    func accept(_ response: HTTPURLResponse, run: Int) throws -> Int64 {
        try store.withLock { store in
            guard store.run == run else { throw CancellationError() }
            store.response = response
            if response.statusCode == 206, store.received > 0, store.request.value(forHTTPHeaderField: "Range") != nil {
                guard Self.contentRangeStart(response) == store.received else {
                    throw CourierError.badServerResponse(
                        reason: "the 206 response does not continue at byte \(store.received), where the download "
                            + "stopped", underlyingError: nil,
                        context: CourierError.Context(request: store.request, response: response))
                }
                return store.received
            }
            if store.received > 0 {
                store.data.removeAll()
                if let output = store.outputStream,
                    !output.setProperty(NSNumber(value: 0), forKey: .fileCurrentOffsetKey)
                {
                    throw CourierError.fileOperationFailed(
                        reason: "the output stream cannot be rewound to write the whole body again",
                        underlyingError: nil, context: CourierError.Context(request: store.request, response: response))
                }
                store.received = 0
            }
            return 0
        }
    }

    /// Keeps a chunk of the body (memory or the output stream); returns the total kept.
    func keep(_ chunk: Data, run: Int) throws -> Int64 {
        try store.withLock { store in
            guard store.run == run else { throw CancellationError() }
            if let output = store.outputStream {
                if output.streamStatus == .notOpen { output.open() }
                try Self.write(chunk, to: output, request: store.request)
            } else {
                store.data.append(chunk)
            }
            store.received += Int64(chunk.count)
            return store.received
        }
    }

    private static func write(_ chunk: Data, to output: OutputStream, request: URLRequest) throws {
        try chunk.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard var base = buffer.bindMemory(to: UInt8.self).baseAddress else { return }
            var left = buffer.count
            while left > 0 {
                let written = output.write(base, maxLength: left)
                guard written > 0 else {
                    throw CourierError.fileOperationFailed(
                        reason: "the output stream refused the body", underlyingError: output.streamError,
                        context: CourierError.Context(request: request))
                }
                left -= written
                base += written
            }
        }
    }

    func report(_ which: KeyPath<Blocks, ProgressBlock?>, bytes: Int64, total: Int64, expected: Int64) {
        guard let block = store.withLock({ $0.blocks[keyPath: which] }) else { return }
        callbackQueues.0.async { block(bytes, total, expected) }
    }

    /// The whole body's expected length: what the response announces after the `offset` bytes already kept, or
    /// `-1` when it announces nothing.
    private static func expectedTotal(of response: HTTPURLResponse, after offset: Int64) -> Int64 {
        let expected = response.expectedContentLength
        return expected >= 0 ? expected + offset : -1
    }

    /// The first byte position of a `206`'s `Content-Range` (`bytes 100-199/200`).
    private static func contentRangeStart(_ response: HTTPURLResponse) -> Int64? {
        guard let range = response.value(forHTTPHeaderField: "Content-Range"),
            range.lowercased().hasPrefix("bytes ")
        else { return nil }
        return Int64(range.dropFirst(6).prefix { $0 != "-" })
    }

    private static func courierError(_ error: any Error, request: URLRequest) -> any Error {
        if error is CourierError { return error }
        if error is CancellationError {
            return CourierError.cancelled(context: CourierError.Context(request: request))
        }
        return CourierError.requestFailed(underlyingError: error, context: CourierError.Context(request: request))
    }
}
