import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Foundation's `HTTPCookieStorage` as a session's ``CookieStore``, for code that shares cookies with URLSession.
///
/// On Apple platforms this is sound, and ``SessionConfiguration/cookieStore``'s default there (the shared storage,
/// as URLSession's). On Linux, swift-corelibs-foundation's storage breaks RFC 6265 in ways that matter (it accepts
/// cookies for public suffixes and for other sites' domains, ignores `Max-Age` on most cookies, and splits values
/// at commas): prefer ``CookieJar`` there.
public struct FoundationCookieStore: CookieStore {
    /// The storage cookies go to and come from.
    public let storage: HTTPCookieStorage

    /// A store over `storage` (default: the process's shared one).
    public init(_ storage: HTTPCookieStorage = .shared) {
        self.storage = storage
    }

    /// The storage's cookies for `url` as a `Cookie` field, as URLSession would send them.
    public func cookieField(for url: URL) -> String? {
        guard let cookies = storage.cookies(for: url), !cookies.isEmpty else { return nil }
        return HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    }

    /// Hands each field to `HTTPCookie.cookies(withResponseHeaderFields:for:)` and the storage, one at a time.
    public func storeCookies(fromSetCookieFields fields: [String], for url: URL) {
        // One field at a time: Foundation would split a joined value at its commas.
        for field in fields {
            let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": field], for: url)
            storage.setCookies(cookies, for: url, mainDocumentURL: nil)
        }
    }

    /// Deletes every cookie of the storage, one by one (the whole storage: the process's, when it is the shared one).
    public func removeAllCookies() {
        for cookie in storage.cookies ?? [] { storage.deleteCookie(cookie) }
    }
}
