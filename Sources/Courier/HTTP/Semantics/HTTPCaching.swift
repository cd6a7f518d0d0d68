import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's HTTP cache rules (RFC 9111, the private-cache subset URLSession applies), over a Foundation
/// `URLCache`: which requests may be answered from the cache, when a stored response is fresh, how a stale one is
/// revalidated, and which responses may be stored.
///
/// Only `GET` data tasks take part. `URLCache` keys entries by URL alone, so a response that `Vary`s on anything but
/// `Accept-Encoding` is not stored.
enum HTTPCaching {
    /// What to do before sending a request.
    enum Plan {
        /// Do not look in the cache (and do not store what comes back, for `reloadIgnoringLocalAndRemoteCacheData`).
        case network(store: Bool)
        /// Answer with this stored response; nothing is sent.
        case cached(CachedURLResponse)
        /// Send the request with these conditional headers; a `304` means the stored response is still good.
        case revalidate(CachedURLResponse, conditions: [String: String])
        /// `returnCacheDataDontLoad` and nothing is stored.
        case miss
    }

    /// The plan for `request` under `policy`.
    static func plan(
        for request: URLRequest, policy: URLRequest.CachePolicy, cache: URLCache, now: Date = Date()
    ) -> Plan {
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return .network(store: false) }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .network(store: policy == .reloadIgnoringLocalCacheData)
        default:
            break
        }
        guard let cached = cache.cachedResponse(for: request), let stored = cached.response as? HTTPURLResponse else {
            return policy == .returnCacheDataDontLoad ? .miss : .network(store: true)
        }
        switch policy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return .cached(cached)
        default:
            let requestDirectives = directives(request.value(forHTTPHeaderField: "Cache-Control"))
            let mustRevalidate = requestDirectives["no-cache"] != nil || requestDirectives["max-age"] == "0"
            if !mustRevalidate, isFresh(stored, now: now) { return .cached(cached) }
            var conditions: [String: String] = [:]
            if let tag = stored.value(forHTTPHeaderField: "ETag") { conditions["If-None-Match"] = tag }
            if let date = stored.value(forHTTPHeaderField: "Last-Modified") { conditions["If-Modified-Since"] = date }
            return conditions.isEmpty ? .network(store: true) : .revalidate(cached, conditions: conditions)
        }
    }

    /// Whether `response` to `request` may be stored.
    static func isStorable(_ response: HTTPURLResponse, for request: URLRequest) -> Bool {
        guard response.statusCode == 200, (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        let responseDirectives = directives(response.value(forHTTPHeaderField: "Cache-Control"))
        let requestDirectives = directives(request.value(forHTTPHeaderField: "Cache-Control"))
        if responseDirectives["no-store"] != nil || requestDirectives["no-store"] != nil { return false }
        if request.value(forHTTPHeaderField: "Authorization") != nil, responseDirectives["public"] == nil {
            return false
        }
        if let vary = response.value(forHTTPHeaderField: "Vary") {
            let fields = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if fields.contains(where: { $0 != "accept-encoding" }) { return false }
        }
        // Worth keeping only if it can be fresh or revalidated.
        let date = response.value(forHTTPHeaderField: "Date").flatMap(parseDate)
        return freshnessLifetime(response, cacheControl: responseDirectives, date: date) != nil
            || response.value(forHTTPHeaderField: "ETag") != nil
            || response.value(forHTTPHeaderField: "Last-Modified") != nil
    }

    /// Whether a stored response can be used without asking the server: its age is below its freshness lifetime
    /// (`max-age`, else `Expires - Date`). Without a `Date` its age is unknown, so it is stale; `no-cache` always is.
    static func isFresh(_ response: HTTPURLResponse, now: Date) -> Bool {
        let cacheControl = directives(response.value(forHTTPHeaderField: "Cache-Control"))
        guard cacheControl["no-cache"] == nil,
            let date = response.value(forHTTPHeaderField: "Date").flatMap(parseDate),
            let lifetime = freshnessLifetime(response, cacheControl: cacheControl, date: date)
        else { return false }
        let age =
            max(0, now.timeIntervalSince(date)) + (response.value(forHTTPHeaderField: "Age").flatMap(Double.init) ?? 0)
        return age < lifetime
    }

    /// `max-age`, or `Expires - Date`, in seconds; `cacheControl` and `date` are the response's, already parsed.
    static func freshnessLifetime(
        _ response: HTTPURLResponse, cacheControl: [String: String?], date: Date?
    ) -> TimeInterval? {
        if let maxAge = cacheControl["max-age"].flatMap({ $0 }).flatMap(Double.init) { return maxAge }
        guard let date, let expires = response.value(forHTTPHeaderField: "Expires").flatMap(parseDate) else {
            return nil
        }
        return expires.timeIntervalSince(date)
    }

    /// `Cache-Control` directives, lower-cased names to their (unquoted) values or `nil`.
    static func directives(_ header: String?) -> [String: String?] {
        var result: [String: String?] = [:]
        for part in (header ?? "").split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let name = pieces.first?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else {
                continue
            }
            let value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: " \"")) : nil
            result[name] = .some(value)
        }
        return result
    }

    /// `response` as a cache keeps it: with a `Date` field of `now` when it came without one, as RFC 9110 §6.6.1
    /// asks of a recipient that caches a message (without it the stored response's age is unknown, and a
    /// `max-age` could never make it fresh).
    static func addingDateIfMissing(to response: HTTPURLResponse, now: Date) -> HTTPURLResponse {
        guard response.value(forHTTPHeaderField: "Date") == nil, let url = response.url else { return response }
        var fields: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { fields[name] = value }
        fields["Date"] = formatDate(now)
        return HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
            ?? response
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func formatDate(_ date: Date) -> String {
        imfFormatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'").string(from: date)
    }

    /// An HTTP date (RFC 9110's IMF-fixdate, the only form servers are required to send).
    static func parseDate(_ text: String) -> Date? {
        imfFormatter("EEE, dd MMM yyyy HH:mm:ss zzz").date(from: text)
    }

    /// A formatter of `format` in English and GMT, as HTTP dates are written whatever the process's locale.
    private static func imfFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}

/// `returnCacheDataDontLoad` was asked for and nothing is stored for the URL (URLSession's
/// `NSURLErrorResourceUnavailable`).
public struct ResourceNotCachedError: Error, Sendable, CustomStringConvertible {
    /// The URL that was asked for.
    public var url: URL?

    /// E.g. `No cached response for https://example.com/x, and the cache policy forbids loading it.`
    public var description: String {
        "No cached response for \(url?.absoluteString ?? "the request"), and the cache policy forbids loading it."
    }
}
