import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The last step: the final response's head and body, handed to the task.
extension TaskExchange {
    /// Asks the did-receive-response hook, then reads the body into the task (memory, file or stream) and stores
    /// the response in the cache when it may be.
    @inline(never)
    func receive(_ response: TransportResponse, head: ResponseHead) async throws {
        switch try hooks.didReceiveResponse.map({ $0(task, try Self.http(head)) }) ?? .allow {
        case .allow: break
        case .cancel: throw CancellationError()
        case .becomeDownload:
            if delegate.sink.keepsInMemory {
                try await delegate.makeDownloadFile().begin()
                if let dataTask = task as? DataTask { hooks.dataTaskDidBecomeDownload?(dataTask) }
            }
        }
        core.events.send(.receivedResponse(task, head), of: delegate)
        // Where the body goes, decided once: the hook above was the last thing that could change it.
        let sink = delegate.sink
        let length = head.contentLength
        let alreadyThere = delegate.downloadFile?.resumeOffset ?? 0
        // A server's `Content-Length` may be anything up to 2^63 − 1: an offset plus it must not trap.
        let expected = length >= 0 ? CheckedConversion.sum(alreadyThere, length) ?? -1 : -1
        let progressTotal = source.method.caseInsensitiveEquals("HEAD") ? 0 : expected
        delegate.state.withLock { $0.expectDownload(expected: expected, progressTotal: progressTotal) }
        if let stream = sink.stream { stream.deliver(head: try Self.http(head)) }
        // The most body bytes the task may hold, when it holds them in memory.
        let limit = sink.keepsInMemory ? max(core.configuration.maximumInMemoryBodySize, 0) : nil
        if response.body.whole == nil {
            // A body still to be read is refused by its declared length; one already whole, by its length below.
            try CollectedBodyLimit.checkDeclaredLength(
                limit, method: source.method, statusCode: head.statusCode, headers: head.headers)
        }
        let received = try await readBody(response.body, into: sink, limit: limit)
        delegate.endTransaction(received: received)
        if core.configuration.urlCache != nil { try storeIfAllowed(head) }
    }

    /// Reads the body into `sink` and returns its length; more than `limit` bytes fail the task.
    private func readBody(_ body: DataChunks, into sink: BodySink, limit: Int?) async throws -> Int64 {
        let limit = limit.map { Int64($0) } ?? .max
        if let whole = body.whole {
            // Already in memory (a gathered body): one delivery, no iteration.
            await task.waitWhileSuspended()
            try core.checkCancellation(task, delegate: delegate)
            if Int64(whole.count) > limit { throw CollectedBodyLimit.error(Int(limit)) }
            if !whole.isEmpty { try await deliver(whole, into: sink) }
            return Int64(whole.count)
        }
        var iterator = body.makeAsyncIterator()
        var received: Int64 = 0
        while true {
            await task.waitWhileSuspended()
            try core.checkCancellation(task, delegate: delegate)
            let next = try await iterator.next()
            // A suspend that came while this read waited holds what it brought (a chunk, or the end) until resume:
            // under load the platform may have gathered many of the server's writes into it.
            await task.waitWhileSuspended()
            try core.checkCancellation(task, delegate: delegate)
            guard let chunk = next else { break }
            received += Int64(chunk.count)
            if received > limit { throw CollectedBodyLimit.error(Int(limit)) }
            try await deliver(chunk, into: sink)
        }
        return received
    }

    /// Hands one chunk of the body to the task (into `sink`), the event sink and a streaming consumer.
    private func deliver(_ chunk: Data, into sink: BodySink) async throws {
        try await delegate.didReceive(chunk, into: sink)
        core.events.send(.receivedData(task, chunk), of: delegate)
        guard let stream = sink.stream else { return }
        delegate.state.withLock { $0.waitForConsumer(true) }
        defer { delegate.state.withLock { $0.waitForConsumer(false) } }
        try await stream.send(chunk)
    }
}

/// Where a task's response body goes, decided by what the task is: kept in memory for its serializer, written to a
/// download's file, or handed chunk by chunk to a streaming consumer (``DataStreamTask``). Every step that treats
/// bodies differently asks this one value (`TaskDelegate.sink`), never the task's class or its parts.
enum BodySink {
    /// Collected in the task's state, for the serializer.
    case memory
    /// Written to the download's file.
    case file(DownloadFile)
    /// Handed to the consumer of a streamed body.
    case stream(ChunkHandoff)

    /// Whether the body is kept in memory (and so bounded by the configuration's in-memory limit).
    var keepsInMemory: Bool {
        if case .memory = self { return true }
        return false
    }

    /// Whether the body goes to a download's file.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    /// The streaming consumer, if the body goes to one.
    var stream: ChunkHandoff? {
        if case .stream(let handoff) = self { return handoff }
        return nil
    }
}
