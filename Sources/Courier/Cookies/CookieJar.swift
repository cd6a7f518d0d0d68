import Foundation

/// Courier's cookie store: RFC 6265bis (the draft that replaces RFC 6265) as a client that is not a browser needs
/// it, and ``SessionConfiguration/cookieStore``'s default on Linux.
///
/// What it guarantees:
/// - A response sets cookies only for its own host or a domain above it that is not a public suffix (the Public
///   Suffix List, see ``publicSuffixListSource``): a host a redirect reached cannot set `Domain=home.example.org`
///   for another site, nor anyone `Domain=co.uk`. IP addresses are never domain-matched.
/// - `Secure` cookies are set only by and sent only over `https` and `wss`, and a plain-http response cannot
///   overwrite or shadow one; names starting `__Secure-` and `__Host-` get their prefixes' checks;
///   `SameSite=None` without `Secure` is refused.
/// - A field without `=` or with an empty name sets nothing (RFC 6265's rule, which 6265bis relaxed for browsers).
/// - `Max-Age` wins over `Expires`, `Max-Age=0` deletes, a date in the past deletes, no cookie lives past 400 days,
///   and an expired cookie is never sent, listed or saved.
/// - A path covers itself and the paths below it at a `/` boundary; the `Cookie` field lists longer paths first,
///   then older cookies first.
/// - At most 4,096 bytes of name and value a cookie, ``maximumCookiesPerDomain`` cookies a domain and
///   ``maximumCookies`` in all; past either, the least recently used go first.
///
/// It is safe to use from any thread (one lock, held only while the cookies are read or changed), `Codable` (as
/// the array of its cookies), and reads and writes curl's cookie files (``netscapeFileText``).
public final class CookieJar: CookieStore, Codable {
    /// The process's jar, shared by the sessions that leave ``SessionConfiguration/cookieStore`` at its default on
    /// Linux, as URLSession's sessions share `HTTPCookieStorage.shared`.
    public static let shared = CookieJar()

    /// Which Public Suffix List the jar checks domains against (compiled in; see the Cookies article).
    public static var publicSuffixListSource: String { PublicSuffixList.source }

    /// The most cookies kept for one domain; default 50.
    public let maximumCookiesPerDomain: Int
    /// The most cookies kept in all; default 3,000.
    public let maximumCookies: Int

    struct State {
        /// The cookies by their ``Cookie/domain``, each list in the order they were stored.
        var byDomain: [String: [Cookie]] = [:]
        var count = 0
        /// The last creation date given, so that every cookie's is distinct (a millisecond apart) and orders them.
        var lastCreation = Date.distantPast
    }

    private let state = Locked(State())

    /// An empty jar with the given limits (at least one cookie each).
    public init(maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3000) {
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
        self.maximumCookies = max(1, maximumCookies)
    }

    /// A jar holding `cookies` (expired ones dropped), as ``insert(_:)`` stores them.
    public convenience init(cookies: [Cookie]) {
        self.init()
        for cookie in cookies { insert(cookie) }
    }

    /// Reads a jar ``encode(to:)`` wrote: the array of its cookies.
    public convenience init(from decoder: any Decoder) throws {
        self.init(cookies: try [Cookie](from: decoder))
    }

    /// Writes the unexpired cookies, as an array.
    public func encode(to encoder: any Encoder) throws {
        try cookies.encode(to: encoder)
    }

    // MARK: CookieStore

    /// The `Cookie` field for a request to `url`: the unexpired cookies whose domain, path and Secure flag let them
    /// go there, longer paths first, then older first; each counts as used now. `nil` when none goes.
    public func cookieField(for url: URL) -> String? {
        // The common case, an empty jar, costs one lock and no parsing of the URL.
        guard state.withLock({ $0.count > 0 }), let request = CookieRequest(url) else { return nil }
        let now = Date()
        // The name and value strings are only retained here; the field is built once, at the end.
        let found = state.withLock { state -> [Match] in
            var found: [Match] = []
            found.reserveCapacity(16)
            Self.visitMatches(of: request, now: now, in: &state, markingUsed: true) { cookie in
                found.append(
                    Match(
                        pathLength: cookie.path.utf8.count, created: cookie.creationDate, name: cookie.name,
                        value: cookie.value))
            }
            return found
        }
        guard !found.isEmpty else { return nil }
        let ordered = found.sorted {
            Self.goesFirst(($0.pathLength, $0.created), before: ($1.pathLength, $1.created))
        }
        // Bytes, then one String: appending to a String costs several times more per piece.
        var field: [UInt8] = []
        field.reserveCapacity(ordered.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 3 })
        for (position, cookie) in ordered.enumerated() {
            if position > 0 { field.append(contentsOf: [UInt8(ascii: ";"), UInt8(ascii: " ")]) }
            if !cookie.name.isEmpty {
                field.append(contentsOf: cookie.name.utf8)
                field.append(UInt8(ascii: "="))
            }
            field.append(contentsOf: cookie.value.utf8)
        }
        return String(decoding: field, as: UTF8.self)
    }

    /// Stores what each of `fields` sets in a response to `url`, by the rules above, in order.
    public func storeCookies(fromSetCookieFields fields: [String], for url: URL) {
        guard !fields.isEmpty, let request = CookieRequest(url) else { return }
        let now = Date()
        for field in fields {
            if let parsed = SetCookie(field, now: now) { store(parsed, from: request, now: now) }
        }
    }

    /// Calls `visit` with each unexpired cookie that goes to `request` (§5.8.3 step 1), removing the expired ones
    /// of the domains it looks at and, with `markingUsed`, counting the others as used at `now`. Only the host's
    /// own domain and those above it are looked at, not every cookie.
    private static func visitMatches(
        of request: CookieRequest, now: Date, in state: inout State, markingUsed: Bool, _ visit: (Cookie) -> Void
    ) {
        for key in request.candidateDomains {
            guard let index = state.byDomain.index(forKey: key) else { continue }
            if state.byDomain.values[index].contains(where: { $0.isExpired(at: now) }) {
                let before = state.byDomain.values[index].count
                state.byDomain.values[index].removeAll { $0.isExpired(at: now) }
                state.count -= before - state.byDomain.values[index].count
            }
            for position in state.byDomain.values[index].indices {
                let cookie = state.byDomain.values[index][position]
                guard !cookie.isHostOnly || key == request.host, !cookie.isSecure || request.isSecure,
                    CookieRequest.path(request.path, matches: cookie.path)
                else { continue }
                if markingUsed { state.byDomain.values[index][position].lastAccessDate = now }
                visit(cookie)
            }
            if state.byDomain.values[index].isEmpty { state.byDomain.remove(at: index) }
        }
    }

    /// The `Cookie` field's order (§5.8.3 step 2): longer paths first, then earlier creation.
    private static func goesFirst(
        _ one: (pathLength: Int, created: Date), before other: (pathLength: Int, created: Date)
    )
        -> Bool
    {
        one.pathLength != other.pathLength ? one.pathLength > other.pathLength : one.created < other.created
    }

    /// A cookie going into a `Cookie` field: what orders it, and what is written (a struct, not a tuple, so no
    /// type metadata is looked up at run time on every request).
    private struct Match {
        var pathLength: Int
        var created: Date
        var name: String
        var value: String
    }

    // MARK: Reading and changing

    /// Stores the cookie one `Set-Cookie` field value sets in a response to `url`, by the rules above.
    ///
    /// - Returns: whether the cookie was accepted (a cookie that deletes one counts as accepted).
    @discardableResult
    public func setCookie(_ field: String, for url: URL) -> Bool {
        let now = Date()
        guard let request = CookieRequest(url), let parsed = SetCookie(field, now: now) else { return false }
        return store(parsed, from: request, now: now)
    }

    /// The cookies a request to `url` would get, in the `Cookie` field's order; reading them does not count as
    /// using them.
    public func cookies(for url: URL) -> [Cookie] {
        guard let request = CookieRequest(url) else { return [] }
        let now = Date()
        let found = state.withLock { state in
            var found: [Cookie] = []
            Self.visitMatches(of: request, now: now, in: &state, markingUsed: false) { found.append($0) }
            return found
        }
        return found.sorted {
            Self.goesFirst(($0.path.utf8.count, $0.creationDate), before: ($1.path.utf8.count, $1.creationDate))
        }
    }

    /// Every cookie that has not expired, by domain, then path, then creation.
    public var cookies: [Cookie] {
        let now = Date()
        return state.withLock { state in state.byDomain.values.flatMap { $0 } }
            .filter { !$0.isExpired(at: now) }
            .sorted { ($0.domain, $0.path, $0.creationDate) < ($1.domain, $1.path, $1.creationDate) }
    }

    /// Stores `cookie` as it is (no rule checks it: it is the caller's), replacing the one with the same name,
    /// domain, path and host-only flag; an expired cookie only removes that one. The limits apply.
    public func insert(_ cookie: Cookie) {
        let now = Date()
        state.withLock { state in
            var cookie = cookie
            if cookie.domain.hasPrefix(".") { cookie.domain.removeFirst() }
            if cookie.path.isEmpty || !cookie.path.hasPrefix("/") { cookie.path = "/" }
            state.lastCreation = max(state.lastCreation, cookie.creationDate)
            put(cookie, in: &state, now: now)
        }
    }

    /// Removes the cookies `shouldRemove` picks.
    public func removeAll(where shouldRemove: (Cookie) throws -> Bool) rethrows {
        try state.withLock { state in
            for key in Array(state.byDomain.keys) {
                let before = state.byDomain[key]?.count ?? 0
                try state.byDomain[key]?.removeAll(where: shouldRemove)
                let after = state.byDomain[key]?.count ?? 0
                state.count -= before - after
                if after == 0 { state.byDomain[key] = nil }
            }
        }
    }

    /// Removes every cookie.
    public func removeAllCookies() {
        removeAll()
    }

    /// Removes every cookie.
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Removes the session cookies (those without an expiry date), as a browser does when it quits.
    public func removeSessionCookies() {
        removeAll { $0.expiresDate == nil }
    }

    // MARK: The storage model (RFC 6265bis §5.7)

    @discardableResult
    private func store(_ parsed: SetCookie, from request: CookieRequest, now: Date) -> Bool {
        var domainAttribute = parsed.domain ?? ""
        guard domainAttribute.utf8.allSatisfy({ $0 > 0 && $0 < 0x80 }) else { return false }  // step 8
        if !domainAttribute.isEmpty, PublicSuffixList.isPublicSuffix(domainAttribute) {  // step 9
            guard domainAttribute == request.host else { return false }
            domainAttribute = ""
        }
        let isHostOnly = domainAttribute.isEmpty
        if !isHostOnly {  // step 10
            guard CookieRequest.domain(domainAttribute, matchesHost: request.host, hostIsIP: request.isIP) else {
                return false
            }
        }
        let domain = isHostOnly ? request.host : domainAttribute
        let path = parsed.path ?? CookieRequest.defaultPath(request.path)
        if parsed.isSecure, !request.isSecure { return false }  // step 13
        if parsed.sameSite == .none, !parsed.isSecure { return false }  // step 19
        let lowerName = parsed.name.lowercased()
        if lowerName.hasPrefix("__secure-"), !parsed.isSecure { return false }  // step 20
        if lowerName.hasPrefix("__host-"), !(parsed.isSecure && isHostOnly && parsed.path == "/") { return false }
        return state.withLock { state in
            if !parsed.isSecure, !request.isSecure, shadowsSecureCookie(parsed.name, domain, path, in: state) {
                return false  // step 16, "Leave Secure Cookies Alone"
            }
            // At least a millisecond apart, so the order survives files that keep dates to the millisecond.
            var created = now
            if created < state.lastCreation.addingTimeInterval(0.001) {
                created = state.lastCreation.addingTimeInterval(0.001)
            }
            state.lastCreation = created
            let cookie = Cookie(
                name: parsed.name, value: parsed.value, domain: domain, isHostOnly: isHostOnly, path: path,
                expiresDate: parsed.expires, isSecure: parsed.isSecure, isHTTPOnly: parsed.isHTTPOnly,
                sameSite: parsed.sameSite, creationDate: created, lastAccessDate: now)
            put(cookie, in: &state, now: now)
            return true
        }
    }

    /// Whether a secure cookie of that name exists whose domain and the new one's match either way and whose path
    /// the new one's falls under.
    private func shadowsSecureCookie(_ name: String, _ domain: String, _ path: String, in state: State) -> Bool {
        for (key, cookies) in state.byDomain
        where key == domain || key.hasSuffix("." + domain) || domain.hasSuffix("." + key) {
            if cookies.contains(where: { $0.isSecure && $0.name == name && CookieRequest.path(path, matches: $0.path) })
            {
                return true
            }
        }
        return false
    }

    /// Replaces the cookie with `cookie`'s key (keeping its creation date), stores `cookie` unless it has
    /// expired, then applies the limits.
    private func put(_ cookie: Cookie, in state: inout State, now: Date) {
        var cookie = cookie
        var list = state.byDomain.removeValue(forKey: cookie.domain) ?? []
        if let old = list.firstIndex(where: { $0.hasSameKey(as: cookie) }) {
            cookie.creationDate = list[old].creationDate
            list.remove(at: old)
            state.count -= 1
        }
        let before = list.count
        list.removeAll { $0.isExpired(at: now) }
        state.count -= before - list.count
        if !cookie.isExpired(at: now) {
            list.append(cookie)
            state.count += 1
        }
        while list.count > maximumCookiesPerDomain, let oldest = Self.leastRecentlyUsed(list) {
            list.remove(at: oldest)
            state.count -= 1
        }
        if !list.isEmpty { state.byDomain[cookie.domain] = list }
        if state.count > maximumCookies { evict(from: &state, now: now) }
    }

    /// Brings the jar under ``maximumCookies``: expired cookies first, then the least recently used.
    private func evict(from state: inout State, now: Date) {
        for key in Array(state.byDomain.keys) {
            let before = state.byDomain[key]?.count ?? 0
            state.byDomain[key]?.removeAll { $0.isExpired(at: now) }
            state.count -= before - (state.byDomain[key]?.count ?? 0)
        }
        let excess = state.count - maximumCookies
        if excess > 0 {
            let all = state.byDomain.values.flatMap { $0 }.sorted { $0.lastAccessDate < $1.lastAccessDate }
            for cookie in all.prefix(excess) {
                state.byDomain[cookie.domain]?.removeAll { $0.hasSameKey(as: cookie) }
                state.count -= 1
            }
        }
        state.byDomain = state.byDomain.filter { !$0.value.isEmpty }
    }

    private static func leastRecentlyUsed(_ list: [Cookie]) -> Int? {
        list.indices.min { list[$0].lastAccessDate < list[$1].lastAccessDate }
    }
}
