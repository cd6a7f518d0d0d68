import Foundation

/// Where a session keeps cookies: it hands over the `Set-Cookie` fields of every response (redirects, retries,
/// WebSocket upgrades and event-stream reconnections included) and asks for the `Cookie` field of every request.
///
/// ``CookieJar`` is Courier's own implementation of RFC 6265bis and the default on Linux;
/// ``FoundationCookieStore`` puts Foundation's `HTTPCookieStorage` behind the same protocol. A store is shared by
/// every task of a session, so it must be safe to call from any thread; the session never holds a lock of its own
/// while it calls.
public protocol CookieStore: Sendable {
    /// The value of the `Cookie` field for a request to `url` (`http`, `https`, `ws` or `wss`), or `nil` when no
    /// stored cookie goes there.
    func cookieField(for url: URL) -> String?

    /// Stores what `fields`, the values of the `Set-Cookie` fields of one response to a request for `url`, set:
    /// each value is one cookie, in the order the response sent them. Cookies the rules refuse are dropped
    /// silently, as browsers drop them.
    func storeCookies(fromSetCookieFields fields: [String], for url: URL)

    /// Removes every cookie (``SessionManager/reset(cancelingTasks:)`` calls it). The default removes nothing: a
    /// store of another kind keeps its cookies until it implements this.
    func removeAllCookies()
}

extension CookieStore {
    /// Removes nothing.
    public func removeAllCookies() {}
}
