import Courier
import Foundation

/// Which requests a stub answers: a method, a URL (exact, by prefix or by path pattern), query items, header fields
/// and the body. Every part given must match; a part left out matches anything.
///
/// ```swift
/// let user = StubMatcher.get("https://api.example.com/users/1")  // this URL; with a query, that query too
/// let users = StubMatcher.get("https://api.example.com/users/*")  // a prefix: anything under it
/// let avatar = StubMatcher.post("/users/:id/avatar")  // a path pattern, any host
///     .header("Content-Type", "image/png")
/// let rename = StubMatcher.put("/users/1").body(json: #"{"name":"Ada"}"#)
/// ```
///
/// Path patterns compare segment by segment: `:name` and `*` match any one segment, `**` (last) any number of them.
public struct StubMatcher: Sendable, CustomStringConvertible {
    /// How the URL is compared.
    public enum URLPattern: Sendable, CustomStringConvertible {
        /// Any URL.
        case any
        /// This URL: scheme, host, port and path equal and, when it has a query, the same query items in any order
        /// (without one, any query matches: ``StubMatcher/queryItems`` can then ask for some).
        case exact(URL)
        /// Any URL whose absolute string starts with this.
        case prefix(String)
        /// Any URL whose path matches this pattern, on any host.
        case path(String)

        /// E.g. `https://api.example.com/users/1`, `https://api.example.com/users/*`, `path /users/:id`.
        public var description: String {
            switch self {
            case .any: "any URL"
            case .exact(let url): url.absoluteString
            case .prefix(let prefix): "\(prefix)*"
            case .path(let pattern): "path \(pattern)"
            }
        }
    }

    /// How the body is compared.
    public enum BodyPattern: Sendable, CustomStringConvertible {
        /// Exactly these bytes.
        case bytes(Data)
        /// JSON equal to this document (object keys in any order, numbers by value).
        case json(Data)
        /// A test of its own.
        case matching(@Sendable (Data) -> Bool)

        /// E.g. `JSON {"a":1}`.
        public var description: String {
            switch self {
            case .bytes(let data): "bytes \(StubMatcher.preview(data))"
            case .json(let data): "JSON \(StubMatcher.preview(data))"
            case .matching: "a body test"
            }
        }
    }

    /// The method, compared without regard to case; `nil` for any.
    public var method: String?
    /// The URL.
    public var url: URLPattern
    /// Query items the URL must have; a `nil` value matches the item with any value.
    public var queryItems: [URLQueryItem]
    /// Header fields the request must have (names without regard to case, values exactly).
    public var headers: HTTPHeaderFields
    /// The body, if it matters.
    public var body: BodyPattern?

    /// A matcher from its parts; every part left out matches anything.
    public init(
        method: String? = nil, url: URLPattern = .any, queryItems: [URLQueryItem] = [],
        headers: HTTPHeaderFields = HTTPHeaderFields(), body: BodyPattern? = nil
    ) {
        self.method = method?.uppercased()
        self.url = url
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
    }

    /// Any request.
    public static let any = StubMatcher()

    /// `method` and a URL written as a string: starting with `/`, a path pattern; ending with `*`, a prefix;
    /// otherwise one URL (an unparsable one is a prefix, so it can only match what starts with it).
    public static func request(_ method: String?, _ url: String) -> StubMatcher {
        StubMatcher(method: method, url: pattern(url))
    }

    /// `GET` requests to `url` (see ``request(_:_:)``).
    public static func get(_ url: String) -> StubMatcher { request("GET", url) }
    /// `POST` requests to `url` (see ``request(_:_:)``).
    public static func post(_ url: String) -> StubMatcher { request("POST", url) }
    /// `PUT` requests to `url` (see ``request(_:_:)``).
    public static func put(_ url: String) -> StubMatcher { request("PUT", url) }
    /// `PATCH` requests to `url` (see ``request(_:_:)``).
    public static func patch(_ url: String) -> StubMatcher { request("PATCH", url) }
    /// `DELETE` requests to `url` (see ``request(_:_:)``).
    public static func delete(_ url: String) -> StubMatcher { request("DELETE", url) }
    /// `HEAD` requests to `url` (see ``request(_:_:)``).
    public static func head(_ url: String) -> StubMatcher { request("HEAD", url) }
    /// Requests with any method to `url` (see ``request(_:_:)``).
    public static func url(_ url: String) -> StubMatcher { request(nil, url) }

    /// This matcher, also requiring the query item `name` (with `value`, or any value when `nil`).
    public func query(_ name: String, _ value: String? = nil) -> StubMatcher {
        var copy = self
        copy.queryItems.append(URLQueryItem(name: name, value: value))
        return copy
    }

    /// This matcher, also requiring the header field `name: value`.
    public func header(_ name: String, _ value: String) -> StubMatcher {
        var copy = self
        copy.headers.add(name: name, value: value)
        return copy
    }

    /// This matcher, also requiring the body to be exactly `bytes`.
    public func body(_ bytes: Data) -> StubMatcher { with(body: .bytes(bytes)) }
    /// This matcher, also requiring the body to be `text` in UTF-8.
    public func body(text: String) -> StubMatcher { with(body: .bytes(Data(text.utf8))) }
    /// This matcher, also requiring the body to be JSON equal to `json`.
    public func body(json: String) -> StubMatcher { with(body: .json(Data(json.utf8))) }
    /// This matcher, also requiring the body to be JSON equal to `value` encoded.
    ///
    /// - Throws: what `JSONEncoder` throws for `value`.
    public func body(json value: some Encodable) throws -> StubMatcher {
        with(body: .json(try JSONEncoder().encode(value)))
    }
    /// This matcher, also requiring `test` to accept the body.
    public func body(matching test: @escaping @Sendable (Data) -> Bool) -> StubMatcher {
        with(body: .matching(test))
    }

    private func with(body: BodyPattern) -> StubMatcher {
        var copy = self
        copy.body = body
        return copy
    }

    /// E.g. `GET https://api.example.com/users/1 ?page=2 [Accept: application/json] body JSON {"a":1}`.
    public var description: String {
        var parts = [method ?? "any method", url.description]
        if !queryItems.isEmpty {
            parts.append("?" + queryItems.map { "\($0.name)=\($0.value ?? "*")" }.joined(separator: "&"))
        }
        if !headers.isEmpty {
            parts.append("[" + headers.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]")
        }
        if let body { parts.append("body \(body)") }
        return parts.joined(separator: " ")
    }

    // MARK: Matching

    /// The parts of the matcher a request fails, by name (`method`, `URL`, `query`, `headers`, `body`); empty when
    /// it matches.
    func mismatches(_ request: StubbedRequest) -> [String] {
        var failed: [String] = []
        if let method, method != request.method.uppercased() { failed.append("method") }
        if !Self.matches(url, request.url) { failed.append("URL") }
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        if !queryItems.allSatisfy({ wanted in
            items.contains { $0.name == wanted.name && (wanted.value == nil || $0.value == wanted.value) }
        }) {
            failed.append("query")
        }
        if !headers.allSatisfy({ request.headers.values(for: $0.name).contains($0.value) }) { failed.append("headers") }
        if let body, !Self.matches(body, request.body) { failed.append("body") }
        return failed
    }

    static func matches(_ pattern: URLPattern, _ url: URL) -> Bool {
        switch pattern {
        case .any: return true
        case .prefix(let prefix): return url.absoluteString.hasPrefix(prefix)
        case .path(let pattern):
            return pathMatches(pattern, URLComponents(url: url, resolvingAgainstBaseURL: false)?.path ?? url.path)
        case .exact(let wanted): return sameURL(wanted, url, anyQueryWhenNone: true)
        }
    }

    /// Same scheme and host (without regard to case), port (the scheme's default filled in), path, and query items
    /// in any order (any query at all, when `anyQueryWhenNone` and `a` has none); the fragment is never sent, so it
    /// does not count.
    static func sameURL(_ a: URL, _ b: URL, anyQueryWhenNone: Bool = false) -> Bool {
        guard let left = URLComponents(url: a, resolvingAgainstBaseURL: true),
            let right = URLComponents(url: b, resolvingAgainstBaseURL: true)
        else { return a.absoluteString == b.absoluteString }
        func port(_ parts: URLComponents) -> Int? {
            parts.port
                ?? (parts.scheme?.lowercased() == "https" ? 443 : parts.scheme?.lowercased() == "http" ? 80 : nil)
        }
        func query(_ parts: URLComponents) -> [String] {
            (parts.percentEncodedQueryItems ?? []).map { "\($0.name)=\($0.value ?? "")" }.sorted()
        }
        let leftPath = left.percentEncodedPath.isEmpty ? "/" : left.percentEncodedPath
        let rightPath = right.percentEncodedPath.isEmpty ? "/" : right.percentEncodedPath
        return left.scheme?.lowercased() == right.scheme?.lowercased()
            && left.host?.lowercased() == right.host?.lowercased() && port(left) == port(right)
            && leftPath == rightPath
            && (anyQueryWhenNone && left.percentEncodedQuery == nil || query(left) == query(right))
    }

    static func pathMatches(_ pattern: String, _ path: String) -> Bool {
        let wanted = pattern.split(separator: "/", omittingEmptySubsequences: true)
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for (index, part) in wanted.enumerated() {
            if part == "**" { return true }
            guard index < segments.count else { return false }
            if part == "*" || part.hasPrefix(":") { continue }
            if part != segments[index] { return false }
        }
        return wanted.count == segments.count
    }

    static func matches(_ pattern: BodyPattern, _ body: Data) -> Bool {
        switch pattern {
        case .bytes(let bytes): return bytes == body
        case .matching(let test): return test(body)
        case .json(let wanted):
            guard let left = try? JSONSerialization.jsonObject(with: wanted, options: [.fragmentsAllowed]),
                let right = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
            else { return false }
            return JSONEquality.equal(left, right)
        }
    }

    private static func pattern(_ url: String) -> URLPattern {
        if url.hasPrefix("/") { return .path(url) }
        if url.hasSuffix("*") { return .prefix(String(url.dropLast())) }
        guard let parsed = URL(string: url), parsed.scheme != nil else { return .prefix(url) }
        return .exact(parsed)
    }

    /// Up to 60 characters of `data`, as text when it is UTF-8.
    static func preview(_ data: Data) -> String {
        guard let text = String(data: data.prefix(60), encoding: .utf8) else { return "\(data.count) bytes" }
        return data.count > 60 ? text + "…" : text
    }
}
