import Foundation

/// Which proxy each request goes through (``SessionConfiguration/proxy``): one for `http` (and `ws`) URLs, one for
/// `https` (and `wss`), and the hosts that go direct.
///
/// ``environment(_:)`` reads them as curl does (the default of ``SessionConfiguration/proxy``):
/// - `http_proxy` for `http`, `https_proxy` for `https`, `all_proxy` for both when the other is not set; each also in
///   upper case, the lower-case one first. `HTTP_PROXY` is not read when `REQUEST_METHOD` is set: in a CGI program
///   it comes from the request's `Proxy:` header ("httpoxy").
/// - `no_proxy` (or `NO_PROXY`): hosts that go direct, separated by commas: `*`, names that also cover the names
///   below them, addresses and networks (`10.0.0.0/8`), each optionally with `:port` (see `NoProxyRule`).
/// - An empty variable counts as unset. A variable that is not a proxy URL fails every request it would apply to
///   with ``CourierError/invalidURL(_:)``, rather than sending them direct.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for `http` and `ws` requests.
    public var http: Proxy?
    /// The proxy for `https` and `wss` requests.
    public var https: Proxy?
    /// The hosts that go direct, in `NO_PROXY`'s syntax.
    public var exceptions: [String] {
        didSet { rules = exceptions.compactMap(NoProxyRule.init) }
    }
    private var rules: [NoProxyRule]
    /// Variables that held something other than a proxy URL, by the scheme they were for (redacted).
    private var invalid: [String: String] = [:]

    /// Settings with the given proxies and exceptions.
    public init(http: Proxy? = nil, https: Proxy? = nil, exceptions: [String] = []) {
        self.http = http
        self.https = https
        self.exceptions = exceptions
        rules = exceptions.compactMap(NoProxyRule.init)
    }

    /// One proxy for every request, except those to `exceptions`.
    public init(all proxy: Proxy, exceptions: [String] = []) {
        self.init(http: proxy, https: proxy, exceptions: exceptions)
    }

    /// ``SessionConfiguration/proxy``'s default: on Linux, what `environment` says (``environment(_:)``); on Apple
    /// platforms `nil`, so that ``URLSessionTransport`` (their default transport) applies the system's proxy settings.
    ///
    /// URLSession on Apple platforms takes no proxy from the request and refuses a request that names one (see
    /// ``URLSessionTransport``): a default read from `http_proxy` there would fail every request of a process with the
    /// variable set. Ask for ``environment(_:)`` explicitly to use it with ``NIOTransport``.
    static func platformDefault(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProxySettings? {
        #if canImport(Darwin)
            return nil
        #else
            return Self.environment(environment)
        #endif
    }

    /// The settings the environment gives (see ``ProxySettings``); `nil` when it names no proxy.
    public static func environment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProxySettings? {
        func value(_ names: String...) -> (name: String, value: String)? {
            for name in names {
                if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
                    return (name, value)
                }
            }
            return nil
        }
        let isCGI = environment["REQUEST_METHOD"] != nil
        let all = value("all_proxy", "ALL_PROXY")
        let http = (isCGI ? value("http_proxy") : value("http_proxy", "HTTP_PROXY")) ?? all
        let https = value("https_proxy", "HTTPS_PROXY") ?? all
        guard http != nil || https != nil else { return nil }
        var settings = ProxySettings(exceptions: exceptions(fromEnvironment: environment))
        for (scheme, variable) in [("http", http), ("https", https)] {
            guard let variable else { continue }
            do {
                let proxy = try Proxy(url: variable.value)
                if scheme == "http" { settings.http = proxy } else { settings.https = proxy }
            } catch {
                settings.invalid[scheme] = "\(variable.name)=\(Proxy.redacted(variable.value))"
            }
        }
        return settings
    }

    /// The entries of `no_proxy` (or `NO_PROXY`) in `environment`, for settings of your own that honour it.
    public static func exceptions(
        fromEnvironment environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        let list = environment["no_proxy"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["NO_PROXY"] ?? ""
        return list.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    /// The proxy a request to `url` goes through, or `nil` to go direct.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when the environment variable for `url`'s scheme held no proxy
    ///   URL (and `url` is not an exception).
    public func proxy(for url: URL) throws -> Proxy? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        let secure = scheme == "https" || scheme == "wss"
        guard secure || scheme == "http" || scheme == "ws" else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let port = url.port ?? (secure ? 443 : 80)
        if rules.contains(where: { $0.matches(host: bare, port: port) }) { return nil }
        if let invalid = invalid[secure ? "https" : "http"] {
            throw CourierError.invalidURL("the proxy in \(invalid)")
        }
        return secure ? https : http
    }

    /// Whether `lhs` and `rhs` send every request the same way.
    public static func == (lhs: ProxySettings, rhs: ProxySettings) -> Bool {
        lhs.http == rhs.http && lhs.https == rhs.https && lhs.exceptions == rhs.exceptions
            && lhs.invalid == rhs.invalid
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(http)
        hasher.combine(https)
        hasher.combine(exceptions)
        hasher.combine(invalid)
    }
}
