import Courier
import Crypto
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The demo's steps that move files and images: an operation batch, an image grid, a cached response, a multipart
/// upload, a resumed download, and the pinned requests.
extension Demo {
    /// Three `HTTPRequestOperation`s on a queue of width 2 as one batch; the second is paused once a third of it
    /// has arrived and resumed 200 ms later, which continues it with `Range` and `If-Range`.
    func operationBatch() async throws -> Outcome {
        let url = server.baseURL.appendingPathComponent("files/archive.bin")
        let total = Int64(server.archive.count)
        let operations = (0..<3).map { _ in HTTPRequestOperation(request: URLRequest(url: url)) }
        for operation in operations { operation.completionQueue = queue }
        let lines = LockedValue([String]())
        let paused = LockedValue<Int64?>(nil)
        let second = operations[1]
        let queue = queue
        second.setDownloadProgressBlock { _, received, _ in
            guard received >= total / 3, paused.withLock({ $0 == nil }) else { return }
            second.pause()
            guard second.isPaused else { return }
            paused.withLock { $0 = received }
            lines.withLock { $0.append("operation 2 paused after \(received) of \(total) bytes") }
            queue.asyncAfter(deadline: .now() + 0.2) { second.resume() }
        }
        let finished: [URLConnectionOperation] = await withCheckedContinuation { continuation in
            let batch = URLConnectionOperation.batch(
                of: operations,
                progress: { done, count in lines.withLock { $0.append("batch: \(done) of \(count) finished") } },
                completion: { continuation.resume(returning: $0) })
            let operationQueue = OperationQueue()
            operationQueue.maxConcurrentOperationCount = 2
            for operation in batch { operationQueue.addOperation(operation) }
        }
        let expected = Data(SHA256.hash(data: server.archive))
        for (index, operation) in finished.enumerated() {
            if let error = operation.error { throw CommandFailure(.failure, "operation \(index + 1): \(error)") }
            let digest = operation.responseData.map { Data(SHA256.hash(data: $0)) }
            try Self.check(digest == expected, "operation \(index + 1)'s body does not match the archive")
        }
        var outcome = lines.withLock { $0 }
        if let offset = paused.withLock({ $0 }) {
            let range = second.request.value(forHTTPHeaderField: "Range") ?? "none"
            // Bytes already on their way when pause() was called are kept too, so the resume may start further on
            // than the progress report that asked for the pause; the archive's digest below proves nothing was lost.
            let resumedAt = range.hasPrefix("bytes=") ? Int64(range.dropFirst(6).dropLast()) : nil
            try Self.check(
                resumedAt.map { $0 >= offset && $0 < total } == true && range.hasSuffix("-"),
                "the resumed request asked for \(range)")
            try Self.check(second.response?.statusCode == 206, "the resume was not answered with 206")
            outcome.append("operation 2 resumed with Range: \(range) and If-Range; the server answered 206")
        }
        outcome.append("all 3 bodies match the archive's SHA-256")
        return outcome
    }

    func imageGrid() async throws -> Outcome {
        let tiles = [0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1, 4, 4, 5, 5]
        let wire = StatusRecordingTransport(base: NIOTransport())
        defer { Task { await wire.shutdown() } }
        let cache = AutoPurgingImageCache()
        let downloader = ImageDownloader(
            session: HTTPSessionManager(configuration: .ephemeral, transport: wire), imageCache: cache,
            callbackQueue: queue)
        let requests = tiles.map { URLRequest(url: server.baseURL.appendingPathComponent("tiles/\($0).bmp")) }
        let images: [Int: Image] = try await withCheckedThrowingContinuation { continuation in
            // Resumed once: by the last success, or by the first failure.
            let state = LockedValue((images: [Int: Image](), resumed: false))
            for (index, request) in requests.enumerated() {
                downloader.downloadImage(
                    for: request,
                    success: { _, _, image in
                        let done = state.withLock { state -> [Int: Image]? in
                            state.images[index] = image
                            guard state.images.count == tiles.count, !state.resumed else { return nil }
                            state.resumed = true
                            return state.images
                        }
                        if let done { continuation.resume(returning: done) }
                    },
                    failure: { _, _, error in
                        let first = state.withLock { state -> Bool in
                            defer { state.resumed = true }
                            return !state.resumed
                        }
                        if first { continuation.resume(throwing: error) }
                    })
            }
        }
        let downloads = wire.statuses.count
        try Self.check(downloads == Set(tiles).count, "\(downloads) requests for \(Set(tiles).count) distinct tiles")
        for (index, tile) in tiles.enumerated() {
            try Self.check(images[index]?.pixelWidth == 8 + tile, "cell \(index) holds the wrong image")
        }
        let hitsBefore = cache.hitCount
        let cachedReceipts = requests.map { downloader.downloadImage(for: $0) }
        let hits = cache.hitCount - hitsBefore
        try Self.check(cachedReceipts.allSatisfy { $0 == nil } && hits == tiles.count, "the second pass was not cached")
        try Self.check(wire.statuses.count == downloads, "the second pass went to the server")
        let rows = stride(from: 0, to: tiles.count, by: 4).map { start in
            tiles[start..<start + 4].map { tile -> String in
                let (r, g, b) = DemoServer.tileColour(tile)
                let cell = "tile \(tile) \(8 + tile)×8"
                return style.enabled ? style.apply("48;2;\(r);\(g);\(b)", " \(cell) ") : "[\(cell)]"
            }.joined(separator: " ")
        }
        return rows + [
            "first pass   \(tiles.count) cells, \(Set(tiles).count) distinct images → \(downloads) requests "
                + "(\(tiles.count - downloads) merged into downloads already under way)",
            "second pass  \(style.cyan("\(hits) cache hits")), no request; the cache holds \(cache.count) images, "
                + "\(cache.memoryUsage) bytes",
        ]
    }

    func cached() async throws -> Outcome {
        var configuration = SessionConfiguration.ephemeral
        configuration.proxy = nil
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let wire = StatusRecordingTransport(base: NIOTransport())
        let client = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration, transport: wire)
        defer { Task { await wire.shutdown() } }
        let first = try await client.get("catalog", as: Catalog.self)
        let second = try await client.get("catalog", as: Catalog.self)
        let statuses = wire.statuses
        try Self.check(statuses == [200, 304], "the server answered \(statuses), expected [200, 304]")
        try Self.check(second.statusCode == 200 && second.value == first.value, "the cached answer differs")
        return [
            "first GET   server 200, ETag \"catalog-v1\", Cache-Control: no-cache → stored in URLCache",
            "second GET  sent If-None-Match: \"catalog-v1\" → server \(style.cyan("304 Not Modified"))",
            "delivered   200 from the cache: \(second.value.items)",
        ]
    }

    func multipartUpload() async throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sample.bin")
        var generator = SplitMix64(seed: 7)
        let content = Data((0..<(2 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        try content.write(to: file)
        let (multipart, body) = try MultipartEncoding.encode(
            serializer: HTTPRequestSerializer(), method: "POST", url: server.baseURL.appendingPathComponent("upload"),
            fields: [(name: "title", value: "courier demo")],
            files: [FileField(name: "file", path: file.path, mimeType: "application/octet-stream")])
        let manager = client()
        manager.responseSerializer = HTTPResponseSerializer()
        let (response, task, _) = try await Upload.send(
            multipart, body: body, manager: manager, bar: ProgressBar(console: console, label: "upload"))
        // The demo server's echo is a few hundred bytes: collected whole, up to 1 MiB.
        var data = Data()
        for try await piece in task.chunks where data.count < 1 << 20 { data.append(piece) }
        let echo = try JSON(data: data)
        let parts = echo["parts"]?.arrayValue ?? []
        let filePart = parts.first { $0["name"]?.stringValue == "file" }
        let expected = Self.sha256(content)
        try Self.check(response.statusCode == 200, "the upload got \(response.statusCode)")
        try Self.check(
            parts.first?["name"]?.stringValue == "title" && parts.count == 2,
            "the server found these parts: \(parts.map { $0["name"]?.stringValue ?? "?" })")
        try Self.check(
            filePart?["sha256"]?.stringValue == expected,
            "the file part's SHA-256 is \(filePart?["sha256"]?.stringValue ?? "missing"), the file's is \(expected)")
        try Self.check(
            Int64(echo["bytes"]?.intValue ?? -1) == body.length,
            "sent \(body.length ?? -1) bytes, the server got \(echo["bytes"]?.intValue ?? -1)")
        return [
            "sent        POST /upload  \(multipart.value(forHTTPHeaderField: "Content-Type") ?? "")",
            "            \(body.length ?? 0) bytes: field title, file \(file.lastPathComponent) (2.0 MiB)",
            "server got  parts " + parts.map { $0["name"]?.stringValue ?? "?" }.joined(separator: ", ")
                + "; SHA-256 of the file part \(style.cyan(expected)) matches",
        ]
    }

    func resumedDownload() async throws -> Outcome {
        let url = server.baseURL.appendingPathComponent("files/archive.bin")
        let total = Int64(server.archive.count)
        let manager = SessionManager(configuration: .ephemeral)
        manager.completionQueue = queue
        defer { manager.invalidate(cancelingTasks: true) }

        // 1. Start, and cancel with resume data once about a third has arrived.
        let interruptAt = total / 3
        let first = ProgressBar(console: console, label: "archive.bin")
        let resumeData: Data? = await withCheckedContinuation { continuation in
            let once = LockedValue<CheckedContinuation<Data?, Never>?>(continuation)
            let finish: @Sendable (Data?) -> Void = { data in
                once.withLock { state in
                    defer { state = nil }
                    return state
                }?.resume(returning: data)
            }
            let taskBox = LockedValue<DownloadTask?>(nil)
            let interrupted = LockedValue(false)
            let task = manager.downloadTask(
                with: URLRequest(url: url),
                progress: { progress in
                    first.update(progress)
                    guard progress.completed >= interruptAt,
                        interrupted.withLock({ state in
                            defer { state = true }
                            return !state
                        })
                    else { return }
                    taskBox.withLock { $0 }?.cancel(producingResumeData: finish)
                },
                completionHandler: { _, _, _ in finish(nil) })
            taskBox.withLock { $0 = task }
            task.resume()
        }
        first.abandon()
        guard let resumeData else {
            throw CommandFailure(.failure, "the download could not be interrupted with resume data")
        }
        let partial = try DownloadResumeData(data: resumeData)

        // 2. Continue from the partial file: Range + If-Range, 206, the rest appended.
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let second = ProgressBar(console: console, label: "archive.bin")
        let (status, range) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Int, String), any Error>) in
            let taskBox = LockedValue<DownloadTask?>(nil)
            let task = manager.downloadTask(
                withResumeData: resumeData, progress: { second.update($0) },
                destination: { _, _ in destination }, options: [.removePreviousFile],
                completionHandler: { response, _, error in
                    if let error {
                        second.abandon()
                        continuation.resume(throwing: error)
                    } else {
                        second.finish()
                        let request = taskBox.withLock { $0 }?.currentRequest
                        continuation.resume(
                            returning: (
                                response?.statusCode ?? 0, request?.value(forHTTPHeaderField: "Range") ?? "none"
                            ))
                    }
                })
            taskBox.withLock { $0 = task }
            task.resume()
        }
        let file = try Data(contentsOf: destination)
        let expected = Self.sha256(server.archive)
        let actual = Self.sha256(file)
        try Self.check(status == 206, "the resumed request got \(status), expected 206 Partial Content")
        try Self.check(
            actual == expected, "SHA-256 of the file is \(actual), the server's is \(expected) (\(file.count) bytes)")
        return [
            "interrupted at \(partial.bytesOnDisk) of \(total) bytes; resume data keeps the partial file and "
                + "ETag \(partial.entityTag ?? "none")",
            "resumed     Range: \(range), If-Range: \(partial.entityTag ?? "none") → \(status) Partial Content",
            "SHA-256     \(style.cyan(actual)) matches the server's",
        ]
    }

    /// A client for the HTTPS listener that trusts the demo's root and pins `pin` (base64 SHA-256 of an SPKI).
    func pinnedClient(pin: String) throws -> HTTPSessionManager {
        let client = HTTPSessionManager(baseURL: server.httpsBaseURL, configuration: .ephemeral)
        client.completionQueue = queue
        var policy = try SecurityPolicy(pinnedPublicKeyHashesBase64: [pin])
        policy.additionalTrustedCertificates = [server.chain.root.der]
        try client.setSecurityPolicy(policy)
        return client
    }

    func pinnedPasses() async throws -> Outcome {
        let pin = server.chain.leaf.publicKeyHashBase64
        let response = try await pinnedClient(pin: pin).get("search", parameters: ["q": "pinned"], as: SearchEcho.self)
        try Self.check(response.value.query == "q=pinned", "the server saw \(response.value.query)")
        return [
            "server      \(server.httpsBaseURL.absoluteString), chain made at start: leaf ← intermediate ← root",
            "policy      trust the demo's root; pin the leaf's public key sha256//\(style.cyan(pin))",
            "received    \(response.statusCode) over TLS; the server saw \(response.value.query)",
        ]
    }

    func pinnedRefused() async throws -> Outcome {
        let otherKey = P256.Signing.PrivateKey().publicKey.derRepresentation
        let pin = Data(SHA256.hash(data: otherKey)).base64EncodedString()
        do {
            let response = try await pinnedClient(pin: pin).get("search", parameters: ["q": "refused"])
            throw CommandFailure(.failure, "a request with a wrong pin got \(response.statusCode)")
        } catch let error as CourierError {
            guard case .serverTrustEvaluationFailed(let host, let reason) = error else { throw error }
            return [
                "policy      pin another key, sha256//\(pin)",
                "refused     \(style.red(error.description))",
                "host        \(host); reason: \(reason)",
            ]
        }
    }
}
