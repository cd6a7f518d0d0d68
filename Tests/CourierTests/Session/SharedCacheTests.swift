import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache every session has by default (issue 38's AFNetworking default), and the rules that make one cache safe
/// for every user of a process: RFC 9111's shared cache, each stored response used only for its own URL, and a store
/// that survives swift-corelibs-foundation's `URLCache`.
@Suite(.timeLimit(.minutes(2)))
struct SharedCacheTests {
    static let transports = TestTransports.names

    func manager(_ transport: String, _ configure: (inout SessionConfiguration) -> Void = { _ in }) -> SessionManager {
        var configuration = SessionConfiguration.ephemeral
        configure(&configuration)
        let manager = SessionManager(configuration: configuration, transport: TestTransports.make(transport))
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    func body(_ manager: SessionManager, _ request: URLRequest) async throws -> Data {
        try #require(try await manager.responseAndData(for: request).1)
    }

    @Test
    func sessionsCacheByDefaultInMemory() throws {
        let configuration = SessionConfiguration()
        let cache = try #require(configuration.urlCache)
        #expect(cache === SessionConfiguration.sharedURLCache)
        #expect(SessionConfiguration.default.urlCache === cache)
        #expect(configuration.urlCacheIsShared)
        let first = try #require(SessionConfiguration.ephemeral.urlCache)
        let second = try #require(SessionConfiguration.ephemeral.urlCache)
        #expect(first !== second && first !== cache)
        #expect(first.memoryCapacity == 4 * 1024 * 1024)
        #expect(first.diskCapacity == 0)
        #if canImport(FoundationNetworking)
            #expect(cache.memoryCapacity == 4 * 1024 * 1024)
            #expect(cache.diskCapacity == 0)
        #endif
    }

    @Test(arguments: transports)
    func theDefaultCacheAnswersAFreshResponseForEveryDefaultSession(transport: String) async throws {
        let expected = Data("shared by default".utf8)
        let server = try await RangeServer.start(expected, cacheControl: "public, max-age=60")
        defer { Task { try await server.stop() } }
        let one = SessionManager(configuration: .default, transport: TestTransports.make(transport))
        let other = SessionManager(configuration: .default, transport: TestTransports.make(transport))
        for manager in [one, other] {
            manager.responseSerializer = HTTPResponseSerializer()
            manager.completionQueue = DispatchQueue(label: "test.completion")
        }
        #expect(try await body(one, URLRequest(url: server.fileURL)) == expected)
        #expect(try await body(other, URLRequest(url: server.fileURL)) == expected)
        #expect(server.requests.count == 1)

        var uncached = SessionConfiguration.default
        uncached.urlCache = nil
        let direct = SessionManager(configuration: uncached, transport: TestTransports.make(transport))
        direct.responseSerializer = HTTPResponseSerializer()
        direct.completionQueue = DispatchQueue(label: "test.completion")
        #expect(try await body(direct, URLRequest(url: server.fileURL)) == expected)
        #expect(server.requests.count == 2)
    }

    @Test(
        "A stored response answers its own URL only: the query counts (corelibs' URLCache key leaves it out)",
        arguments: transports)
    func theQueryIsPartOfTheKey(transport: String) async throws {
        // httpbin's /cache/60 is `public, max-age=60` and echoes the query in its body.
        let manager = manager(transport)
        let pageOne = try await HTTPBin.url("cache/60?page=1")
        let pageTwo = try await HTTPBin.url("cache/60?page=2")
        let first = try await body(manager, URLRequest(url: pageOne))
        let second = try await body(manager, URLRequest(url: pageTwo))
        #expect(String(decoding: first, as: UTF8.self).contains("\"page\": \"1\""))
        #expect(String(decoding: second, as: UTF8.self).contains("\"page\": \"2\""))
        let storedTwo = try #require(manager.configuration.urlCache?.cachedResponse(for: URLRequest(url: pageTwo)))
        #expect(storedTwo.data == second)
    }

    @Test(
        "Storing a URL again, then filling the cache, keeps every entry once (corelibs' URLCache would crash)",
        arguments: transports)
    func restoringAnEntryThenEvictingDoesNotCrash(transport: String) async throws {
        // corelibs' eviction walks its insertion list; a key stored twice is listed twice, and once the first
        // listing is evicted the second is force-unwrapped. X, Y, X again, Z, then W too big for what is left.
        var servers: [RangeServer] = []
        for size in [400, 400, 400, 1_200] {
            servers.append(try await RangeServer.start(Data(repeating: 0x61, count: size), cacheControl: "max-age=60"))
        }
        defer { for server in servers { Task { try await server.stop() } } }
        let cache = SessionConfiguration.memoryURLCache(capacity: 1_500)
        let manager = manager(transport) { $0.urlCache = cache }
        var reload = URLRequest(url: servers[0].fileURL)
        reload.cachePolicy = .reloadIgnoringLocalCacheData
        for request in [
            URLRequest(url: servers[0].fileURL), URLRequest(url: servers[1].fileURL), reload,
            URLRequest(url: servers[2].fileURL), URLRequest(url: servers[3].fileURL),
        ] {
            _ = try await body(manager, request)
        }
        #expect(cache.cachedResponse(for: URLRequest(url: servers[3].fileURL))?.data.count == 1_200)
        #expect(cache.currentMemoryUsage <= 1_500)
    }

    @Test(
        "A shared cache keeps no response meant for one user: private, Authorization, Cookie and Set-Cookie (RFC 9111 §3.5)"
    )
    func sharedCacheStorageRules() throws {
        let url = try #require(URL(string: "https://api.example.test/me"))
        let date = HTTPCaching.formatDate(Date())
        func response(_ fields: [String: String]) throws -> HTTPURLResponse {
            try #require(
                HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: nil,
                    headerFields: fields.merging(["Date": date]) { a, _ in a }))
        }
        func request(_ fields: [String: String] = [:]) -> URLRequest {
            var request = URLRequest(url: url)
            for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
            return request
        }
        let authorized = request(["Authorization": "Bearer a"])
        let withCookie = request(["Cookie": "session=a"])
        let plain = try response(["Cache-Control": "max-age=60"])
        let privateOne = try response(["Cache-Control": "private, max-age=60"])
        let settingCookie = try response(["Cache-Control": "max-age=60", "Set-Cookie": "id=1"])

        #expect(HTTPCaching.isStorable(plain, for: request()))
        #expect(!HTTPCaching.isStorable(privateOne, for: request()))
        #expect(!HTTPCaching.isStorable(plain, for: authorized))
        #expect(!HTTPCaching.isStorable(plain, for: withCookie))
        #expect(!HTTPCaching.isStorable(settingCookie, for: request()))
        for allowing in ["public, max-age=60", "s-maxage=60", "max-age=60, must-revalidate"] {
            #expect(HTTPCaching.isStorable(try response(["Cache-Control": allowing]), for: authorized))
        }
        #expect(HTTPCaching.isStorable(try response(["Cache-Control": "public, max-age=60"]), for: withCookie))
        #expect(!HTTPCaching.isStorable(try response(["Cache-Control": "s-maxage=60"]), for: withCookie))

        // A private cache (one user's) keeps them all, as URLSession's does.
        for (stored, asked) in [
            (privateOne, request()), (plain, authorized), (plain, withCookie), (settingCookie, request()),
        ] {
            #expect(HTTPCaching.isStorable(stored, for: asked, shared: false))
        }
        // no-store still wins everywhere.
        #expect(
            !HTTPCaching.isStorable(try response(["Cache-Control": "no-store, public"]), for: request(), shared: false))
    }

    @Test("s-maxage decides a shared cache's freshness, max-age a private one's (RFC 9111 §5.2.2.10)")
    func sharedMaxAge() throws {
        let url = try #require(URL(string: "https://api.example.test/x"))
        let now = Date()
        let fields = [
            "Date": HTTPCaching.formatDate(now.addingTimeInterval(-30)), "Cache-Control": "max-age=60, s-maxage=10",
        ]
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: fields))
        #expect(!HTTPCaching.isFresh(response, shared: true, now: now))
        #expect(HTTPCaching.isFresh(response, shared: false, now: now))
    }

    @Test(arguments: transports)
    func aSharedCacheSendsEveryUsersAuthorizedRequest(transport: String) async throws {
        let server = try await RangeServer.start(Data("alice's page".utf8), cacheControl: "max-age=60")
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        for user in ["alice", "bob"] {
            var request = URLRequest(url: server.fileURL)
            request.setValue("Bearer \(user)", forHTTPHeaderField: "Authorization")
            _ = try await body(manager, request)
        }
        #expect(server.requests.count == 2)

        let single = self.manager(transport) { $0.urlCacheIsShared = false }
        for _ in 0..<2 {
            var request = URLRequest(url: server.fileURL)
            request.setValue("Bearer alice", forHTTPHeaderField: "Authorization")
            _ = try await body(single, request)
        }
        #expect(server.requests.count == 3)
    }

    @Test("HTTP dates in the three forms RFC 9110 §5.6.7 requires a recipient to read, and written as IMF-fixdate")
    func httpDates() throws {
        let instant = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(HTTPCaching.parseDate(text) == instant, "\(text)")
        }
        #expect(HTTPCaching.formatDate(instant) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPCaching.formatDate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPCaching.formatDate(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPCaching.formatDate(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        var generator = SeededGenerator(seed: 38)
        for _ in 0..<2_000 {
            let seconds = Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPCaching.parseDate(HTTPCaching.formatDate(date)) == date)
        }
    }
}
