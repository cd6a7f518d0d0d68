import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's HTTP cache rules (RFC 9111), over a Foundation `URLCache`: which requests may be answered from the
/// cache, when a stored response is fresh, how a stale one is revalidated, and which responses may be stored.
///
/// Only `GET` data tasks take part. `URLCache` keys entries by URL alone, so a response that `Vary`s on anything but
/// `Accept-Encoding` is not stored. swift-corelibs-foundation's `URLCache` keys them by host, port and path alone
/// (the scheme and the query are left out), so a stored response is used only for the very URL it answered.
///
/// A cache is shared (RFC 9111 §3.5 and §5.2.2.7: one cache serves every user of the process, as in a server app)
/// unless the configuration says it is private: a shared cache does not store `private` responses, responses to a
/// request with `Authorization` unless they allow it (`public`, `s-maxage`, `must-revalidate`), and, as Courier's own
/// rule, responses to a request with a `Cookie` field unless `public`, nor responses that set a cookie; its freshness
/// reads `s-maxage` before `max-age`.
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
        for request: URLRequest, policy: URLRequest.CachePolicy, cache: URLCache, shared: Bool = true,
        now: Date = Date()
    ) -> Plan {
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return .network(store: false) }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .network(store: policy == .reloadIgnoringLocalCacheData)
        default:
            break
        }
        guard let cached = cache.cachedResponse(for: request), let stored = cached.response as? HTTPURLResponse,
            answers(stored, request)
        else {
            return policy == .returnCacheDataDontLoad ? .miss : .network(store: true)
        }
        switch policy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return .cached(cached)
        default:
            let requestDirectives = directives(request.value(forHTTPHeaderField: "Cache-Control"))
            let mustRevalidate = requestDirectives["no-cache"] != nil || requestDirectives["max-age"] == "0"
            if !mustRevalidate, isFresh(stored, shared: shared, now: now) { return .cached(cached) }
            var conditions: [String: String] = [:]
            if let tag = stored.value(forHTTPHeaderField: "ETag") { conditions["If-None-Match"] = tag }
            if let date = stored.value(forHTTPHeaderField: "Last-Modified") { conditions["If-Modified-Since"] = date }
            return conditions.isEmpty ? .network(store: true) : .revalidate(cached, conditions: conditions)
        }
    }

    /// Whether `response` to `request` may be stored, in a shared cache (see the type's rules) or a private one.
    static func isStorable(_ response: HTTPURLResponse, for request: URLRequest, shared: Bool = true) -> Bool {
        guard response.statusCode == 200, (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        // Worth keeping only if it can be fresh or revalidated; most API responses say none of this, and leave here
        // before anything is parsed.
        let cacheControl = response.value(forHTTPHeaderField: "Cache-Control")
        let expires = response.value(forHTTPHeaderField: "Expires")
        let validated =
            response.value(forHTTPHeaderField: "ETag") != nil
            || response.value(forHTTPHeaderField: "Last-Modified") != nil
        guard cacheControl != nil || expires != nil || validated else { return false }
        let responseDirectives = directives(cacheControl)
        let requestDirectives = directives(request.value(forHTTPHeaderField: "Cache-Control"))
        if responseDirectives["no-store"] != nil || requestDirectives["no-store"] != nil { return false }
        if shared {
            let allowsAuthorization = ["public", "s-maxage", "must-revalidate"].contains {
                responseDirectives[$0] != nil
            }
            if responseDirectives["private"] != nil
                || (request.value(forHTTPHeaderField: "Authorization") != nil && !allowsAuthorization)
                || (request.value(forHTTPHeaderField: "Cookie") != nil && responseDirectives["public"] == nil)
                || response.value(forHTTPHeaderField: "Set-Cookie") != nil
            {
                return false
            }
        }
        if let vary = response.value(forHTTPHeaderField: "Vary") {
            let fields = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if fields.contains(where: { $0 != "accept-encoding" }) { return false }
        }
        if validated { return true }
        let date = response.value(forHTTPHeaderField: "Date").flatMap(parseDate)
        return freshnessLifetime(response, cacheControl: responseDirectives, shared: shared, date: date) != nil
    }

    /// Whether a response with these fields can be fresh or revalidated at all, the first of ``isStorable(_:for:shared:)``'s
    /// tests, read from the fields alone.
    static func mayBeStored(_ fields: HTTPHeaderFields) -> Bool {
        ["Cache-Control", "Expires", "ETag", "Last-Modified"].contains { fields[$0] != nil }
    }

    /// Whether `stored` was the answer to `request`'s URL (the fragment aside): the cache's key may be coarser.
    static func answers(_ stored: HTTPURLResponse, _ request: URLRequest) -> Bool {
        guard let asked = request.url, let answered = stored.url else { return false }
        return key(asked) == key(answered)
    }

    /// What a stored response is kept under: the URL without its fragment, which never reaches the server.
    static func key(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }

    /// Whether a stored response can be used without asking the server: its age is below its freshness lifetime
    /// (`s-maxage` in a shared cache, `max-age`, else `Expires - Date`). Without a `Date` its age is unknown, so it
    /// is stale; `no-cache` always is.
    static func isFresh(_ response: HTTPURLResponse, shared: Bool = true, now: Date) -> Bool {
        let cacheControl = directives(response.value(forHTTPHeaderField: "Cache-Control"))
        guard cacheControl["no-cache"] == nil,
            let date = response.value(forHTTPHeaderField: "Date").flatMap(parseDate),
            let lifetime = freshnessLifetime(response, cacheControl: cacheControl, shared: shared, date: date)
        else { return false }
        let age =
            max(0, now.timeIntervalSince(date)) + (response.value(forHTTPHeaderField: "Age").flatMap(Double.init) ?? 0)
        return age < lifetime
    }

    /// `s-maxage` (shared caches only), `max-age`, or `Expires - Date`, in seconds; `cacheControl` and `date` are the
    /// response's, already parsed.
    static func freshnessLifetime(
        _ response: HTTPURLResponse, cacheControl: [String: String?], shared: Bool = true, date: Date?
    ) -> TimeInterval? {
        for name in shared ? ["s-maxage", "max-age"] : ["max-age"] {
            if let seconds = cacheControl[name].flatMap({ $0 }).flatMap(Double.init) { return seconds }
        }
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

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), written without a `DateFormatter` (making one
    /// costs more than the rest of a cache decision on Linux).
    static func formatDate(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (days, second) = (seconds.floorDivided(by: 86_400), seconds.floorRemainder(by: 86_400))
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.floorRemainder(by: 7)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(second / 3_600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    /// An HTTP date in any of the three forms a recipient must accept (RFC 9110 §5.6.7: IMF-fixdate, RFC 850's and
    /// asctime's), read by the cookie date algorithm, which takes all three.
    static func parseDate(_ text: String) -> Date? {
        CookieDate.parse(text)
    }

    /// The year, month and day of a day count from 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDaysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    /// The quotient rounded towards minus infinity, so that dates before 1970 fall on the right day.
    fileprivate func floorDivided(by divisor: Int) -> Int {
        (self - floorRemainder(by: divisor)) / divisor
    }

    /// The remainder with the divisor's sign (0..<divisor for a positive divisor).
    fileprivate func floorRemainder(by divisor: Int) -> Int {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
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
