import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's HTTP cache over `URLCache`: fresh responses without a request, `304` revalidation, the
/// will-cache hook and the cache policies.
@Suite(.timeLimit(.minutes(2)))
struct HTTPCachingTests {
    static let transports = TestTransports.names

    func manager(_ transport: String, cache: URLCache? = Self.newCache()) -> SessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.urlCache = cache
        let manager = SessionManager(configuration: configuration, transport: TestTransports.make(transport))
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    static func newCache() -> URLCache {
        URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
    }

    /// Runs a GET and returns its response and body.
    func get(_ manager: SessionManager, _ request: URLRequest) async throws -> (HTTPURLResponse?, Data?) {
        try await manager.responseAndData(for: request)
    }

    @Test(arguments: transports)
    func aFreshResponseIsServedWithoutARequest(transport: String) async throws {
        let body = Data("cached body".utf8)
        let server = try await RangeServer.start(body, cacheControl: "max-age=60")
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        let first = try await get(manager, URLRequest(url: server.fileURL))
        let second = try await get(manager, URLRequest(url: server.fileURL))
        #expect(first.1 == body)
        #expect(second.1 == body)
        #expect(second.0?.statusCode == 200)
        #expect(server.requests.count == 1)
    }

    @Test(arguments: transports)
    func aStaleResponseIsRevalidatedAndA304ServesTheStoredBody(transport: String) async throws {
        let body = Data("v1 body".utf8)
        let server = try await RangeServer.start(body, cacheControl: "no-cache")
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        _ = try await get(manager, URLRequest(url: server.fileURL))
        let second = try await get(manager, URLRequest(url: server.fileURL))
        #expect(second.0?.statusCode == 200)
        #expect(second.1 == body)
        #expect(server.requests.map(\.ifNoneMatch) == [nil, "\"v1\""])

        let changed = Data("v2 body".utf8)
        server.replace(with: changed, entityTag: "\"v2\"")
        #expect(try await get(manager, URLRequest(url: server.fileURL)).1 == changed)
        #expect(try await get(manager, URLRequest(url: server.fileURL)).1 == changed)
        #expect(server.requests.map(\.ifNoneMatch) == [nil, "\"v1\"", "\"v1\"", "\"v2\""])
    }

    @Test(arguments: transports)
    func theWillCacheHookCanRefuseOrChangeWhatIsStored(transport: String) async throws {
        let server = try await RangeServer.start(Data("original".utf8), cacheControl: "max-age=60")
        defer { Task { try await server.stop() } }
        let refusing = manager(transport)
        refusing.hooks.willCacheResponse = { _, _ in nil }
        _ = try await get(refusing, URLRequest(url: server.fileURL))
        _ = try await get(refusing, URLRequest(url: server.fileURL))
        #expect(server.requests.count == 2)

        let changing = manager(transport)
        changing.hooks.willCacheResponse = { _, proposed in
            CachedURLResponse(response: proposed.response, data: Data("changed".utf8), storagePolicy: .allowed)
        }
        _ = try await get(changing, URLRequest(url: server.fileURL))
        #expect(try await get(changing, URLRequest(url: server.fileURL)).1 == Data("changed".utf8))
        #expect(server.requests.count == 3)
    }

    @Test(arguments: transports)
    func cachePoliciesDecideWhetherTheNetworkIsUsed(transport: String) async throws {
        let body = Data("policy".utf8)
        let server = try await RangeServer.start(body, cacheControl: "max-age=60")
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        var dontLoad = URLRequest(url: server.fileURL)
        dontLoad.cachePolicy = .returnCacheDataDontLoad
        await #expect(throws: CourierError.self) { _ = try await get(manager, dontLoad) }
        #expect(server.requests.isEmpty)

        _ = try await get(manager, URLRequest(url: server.fileURL))
        #expect(try await get(manager, dontLoad).1 == body)
        var reload = URLRequest(url: server.fileURL)
        reload.cachePolicy = .reloadIgnoringLocalCacheData
        #expect(try await get(manager, reload).1 == body)
        #expect(server.requests.count == 2)
    }

    @Test(arguments: transports)
    func noStoreAndNoCacheAtAllMeanEveryRequestGoesOut(transport: String) async throws {
        let server = try await RangeServer.start(Data("x".utf8), cacheControl: "no-store, max-age=60")
        defer { Task { try await server.stop() } }
        let storing = manager(transport)
        _ = try await get(storing, URLRequest(url: server.fileURL))
        _ = try await get(storing, URLRequest(url: server.fileURL))
        let uncached = manager(transport, cache: nil)
        _ = try await get(uncached, URLRequest(url: server.fileURL))
        #expect(server.requests.count == 3)
    }

    @Test(arguments: transports)
    func httpbinCacheRevalidates(transport: String) async throws {
        // httpbin's /cache answers 304 to any request with If-Modified-Since or If-None-Match.
        let url = try await HTTPBin.url("cache")
        let manager = manager(transport)
        let first = try await get(manager, URLRequest(url: url))
        let second = try await get(manager, URLRequest(url: url))
        #expect(first.0?.statusCode == 200)
        #expect(second.0?.statusCode == 200)
        #expect(second.1 == first.1)
        #expect(first.1?.isEmpty == false)
    }

    @Test(arguments: transports)
    func validatorsOfTheFirstURLAreNotSentWhereARedirectLeads(transport: String) async throws {
        // A stale entry for a URL that now redirects: its ETag must not reach the redirect's target, which would
        // answer 304 for it and have the stale body delivered for a different resource.
        let first = try await HTTPBin.url("redirect-to?url=/etag/abc")
        let cache = Self.newCache()
        let stale = try #require(
            HTTPURLResponse(
                url: first, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["ETag": "abc", "Cache-Control": "no-cache"]))
        cache.storeCachedResponse(
            CachedURLResponse(response: stale, data: Data("stale".utf8)), for: URLRequest(url: first))
        let manager = manager(transport, cache: cache)
        let (response, data) = try await get(manager, URLRequest(url: first))
        #expect(response?.statusCode == 200)
        #expect(response?.url?.path == "/etag/abc")
        #expect(data != Data("stale".utf8))
    }

    @Test("A response stored without a Date gets one (RFC 9110 §6.6.1), so its max-age can make it fresh")
    func aResponseWithoutDateIsStoredWithOne() throws {
        let url = try #require(URL(string: "https://cache.example.test/a"))
        let bare = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"]))
        #expect(!HTTPCaching.isFresh(bare, now: Date()))
        let now = Date()
        let dated = HTTPCaching.addingDateIfMissing(to: bare, now: now)
        let date = try #require(dated.value(forHTTPHeaderField: "Date"))
        #expect(abs((HTTPCaching.parseDate(date) ?? .distantPast).timeIntervalSince(now)) < 1)
        #expect(HTTPCaching.isFresh(dated, now: now.addingTimeInterval(30)))
        #expect(!HTTPCaching.isFresh(dated, now: now.addingTimeInterval(61)))
        #expect(dated.value(forHTTPHeaderField: "Cache-Control") == "max-age=60")
        // A Date the server sent is kept.
        let sent = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(
            HTTPCaching.addingDateIfMissing(to: sent, now: now).value(forHTTPHeaderField: "Date")
                == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test
    func freshnessFollowsMaxAgeExpiresAndDate() throws {
        let url = try #require(URL(string: "http://127.0.0.1/x"))
        let now = Date()
        let date = HTTPDate.format(now.addingTimeInterval(-30))
        func response(_ fields: [String: String]) throws -> HTTPURLResponse {
            try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: fields))
        }
        #expect(HTTPCaching.isFresh(try response(["Date": date, "Cache-Control": "max-age=60"]), now: now))
        #expect(!HTTPCaching.isFresh(try response(["Date": date, "Cache-Control": "max-age=10"]), now: now))
        #expect(!HTTPCaching.isFresh(try response(["Date": date, "Cache-Control": "max-age=60, no-cache"]), now: now))
        #expect(!HTTPCaching.isFresh(try response(["Cache-Control": "max-age=60"]), now: now))
        let expires = HTTPDate.format(now.addingTimeInterval(60))
        #expect(HTTPCaching.isFresh(try response(["Date": date, "Expires": expires]), now: now))
        #expect(HTTPCaching.directives("public, max-age=\"5\", no-cache")["max-age"] == .some("5"))
        let request = URLRequest(url: url)
        #expect(!HTTPCaching.isStorable(try response(["Vary": "Cookie", "ETag": "\"a\""]), for: request))
        #expect(HTTPCaching.isStorable(try response(["Vary": "Accept-Encoding", "ETag": "\"a\""]), for: request))
        #expect(!HTTPCaching.isStorable(try response(["Date": date]), for: request))
    }
}

extension SessionManager {
    /// Runs a data task for `request` (its serializer an `HTTPResponseSerializer`) and returns its response and body.
    func responseAndData(for request: URLRequest) async throws -> (HTTPURLResponse?, Data?) {
        let result = Locked<(HTTPURLResponse?, Data?)>((nil, nil))
        let outcome = Outcome()
        dataTask(with: request) { response, object, error in
            result.withLock { $0 = (response, object as? Data) }
            outcome.fulfill(error)
        }.resume()
        if let error = try await outcome.value() { throw error }
        return result.value
    }
}
