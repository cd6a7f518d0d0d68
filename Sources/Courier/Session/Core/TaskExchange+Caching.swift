import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache steps: answering from ``SessionConfiguration/urlCache`` before anything is sent, revalidating, and
/// storing the final response, as ``HTTPCaching`` and the will-cache hook decide.
extension TaskExchange {
    /// Delivers a usable stored response and returns `true`; otherwise adds the validators of a revalidation to the
    /// request and returns `false`.
    ///
    /// - Throws: a `resourceNotCached`-style failure when the cache policy forbids the network and nothing is stored.
    @inline(never)
    func answerFromCacheOrPrepareRevalidation() throws -> Bool {
        switch cachePlan {
        case .cached(let cached):
            deliverCached(cached)
            return true
        case .miss:
            throw CourierError.requestFailed(
                underlyingError: ResourceNotCachedError(url: request.url),
                context: CourierError.Context(request: request))
        case .revalidate(_, let conditions):
            for (name, value) in conditions where request.value(forHTTPHeaderField: name) == nil {
                request.setValue(value, forHTTPHeaderField: name)
                addedConditions.append(name)
            }
            return false
        case .network:
            return false
        }
    }

    /// Delivers the stored response a `304` confirmed, and returns `true`.
    @inline(never)
    func finishRevalidation(_ response: TransportResponse, head: ResponseHead) async throws -> Bool {
        guard case .revalidate(let cached, _) = cachePlan, head.statusCode == 304 else { return false }
        await discard(response.body)
        deliverCached(cached)
        return true
    }

    /// Stores the final response, once its body is in, when the plan and the rules allow it and the will-cache hook
    /// does not veto it.
    func storeIfAllowed(_ head: ResponseHead) throws {
        switch cachePlan {
        case .network(store: true), .revalidate: break
        default: return
        }
        // Most responses carry nothing a cache can use; they leave before Foundation's response is made.
        guard head.statusCode == 200, HTTPCaching.mayBeStored(head.headers) else { return }
        let received = try Self.http(head)
        // A data task that became a download holds no body to store.
        guard let cache = core.configuration.urlCache, let dataTask = task as? DataTask, delegate.sink.keepsInMemory,
            HTTPCaching.isStorable(received, for: request, shared: core.configuration.urlCacheIsShared)
        else { return }
        let response = HTTPCaching.addingDateIfMissing(to: received, now: Date())
        let proposed = CachedURLResponse(response: response, data: delegate.receivedData, storagePolicy: .allowed)
        guard let chosen = hooks.willCacheResponse.map({ $0(dataTask, proposed) }) ?? proposed else { return }
        #if canImport(FoundationNetworking)
            // swift-corelibs-foundation's URLCache lists a key again when it is stored again, and its eviction then
            // force-unwraps the second listing of an entry it already dropped: a crash. Removing first keeps one.
            cache.removeCachedResponse(for: request)
        #endif
        cache.storeCachedResponse(chosen, for: request)
    }

    /// What the cache can do for this task: only `GET` data tasks whose body is collected take part. Sets
    /// ``cachePlan`` and returns whether the cache has a say before the request goes out.
    func planCaching() -> Bool {
        cachePlan = plan()
        if case .network = cachePlan { return false }
        return true
    }

    private func plan() -> HTTPCaching.Plan {
        guard let cache = core.configuration.urlCache, task is DataTask, delegate.sink.keepsInMemory,
            delegate.uploadBody == nil, source.method.uppercased() == "GET"
        else { return .network(store: false) }
        let policy = source.cachePolicy ?? core.configuration.requestCachePolicy
        #if canImport(FoundationNetworking)
            // Nothing stored for the URL: the plain request need not become a URLRequest to be looked up.
            if let memory = cache as? MemoryURLCache, let url = source.url, !memory.hasEntry(for: url) {
                switch policy {
                case .returnCacheDataDontLoad: return .miss
                case .reloadIgnoringLocalAndRemoteCacheData: return .network(store: false)
                default: return .network(store: true)
                }
            }
        #endif
        return HTTPCaching.plan(
            for: request, policy: policy, cache: cache, shared: core.configuration.urlCacheIsShared)
    }

    /// Completes the exchange with a stored response, as if it had just arrived.
    private func deliverCached(_ cached: CachedURLResponse) {
        let response = cached.response as? HTTPURLResponse
        let head = response.map(ResponseHead.init)
        if let url = response?.url ?? request.url {
            let now = Date()
            var metrics = TransactionMetrics(method: source.method, url: url)
            metrics.resourceFetchType = .localCache
            metrics.statusCode = response?.statusCode
            (metrics.fetchStartDate, metrics.responseStartDate, metrics.responseEndDate) = (now, now, now)
            metrics.countOfResponseBodyBytesReceived = Int64(cached.data.count)
            delegate.state.withLock { $0.recordTransaction(metrics, at: now) }
        }
        let length = Int64(cached.data.count)
        delegate.state.withLock { state in
            state.response = head
            state.expectDownload(expected: length, progressTotal: length)
        }
        if let head { core.events.send(.receivedResponse(task, head), of: delegate) }
        delegate.didReceive(cached.data, keep: true)
        core.events.send(.receivedData(task, cached.data), of: delegate)
    }
}
