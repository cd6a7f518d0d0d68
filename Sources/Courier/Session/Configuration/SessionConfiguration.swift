import CoreMetrics
import Foundation
import Logging
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a ``SessionManager`` sends requests: timeouts, extra headers, cookies and redirects.
public struct SessionConfiguration: Sendable {
    /// How long a request may wait for the response head or the next chunk of its body; default 60 s. A request's
    /// own `URLRequest.timeoutInterval` takes precedence when it differs from `URLRequest`'s default. A retrier's
    /// delay between tries does not count against it (it counts against ``timeoutIntervalForResource``).
    ///
    /// Any value is safe, here and in `URLRequest.timeoutInterval`: `.infinity` and anything over 100 years mean
    /// 100 years (no limit in practice); zero, negative values and NaN leave no time at all, so the task fails with
    /// ``CourierError/timedOut(context:)`` (-1001) at the session's first timeout check (within a quarter of a
    /// second) unless it has already completed.
    public var timeoutIntervalForRequest: TimeInterval = 60
    /// How long a whole task may take, redirects and body included; default 7 days. Values are treated as
    /// ``timeoutIntervalForRequest``'s are (`.infinity`: no limit; zero, negative or NaN: no time).
    public var timeoutIntervalForResource: TimeInterval = 7 * 24 * 60 * 60
    /// Headers added to every request that has no field of the same name.
    public var httpAdditionalHeaders: HTTPHeaderFields = HTTPHeaderFields()
    /// Where cookies are kept: the session stores what every response sets (each redirect hop, retry, WebSocket
    /// upgrade and event-stream reconnection included) and sends what applies with every request that has no
    /// `Cookie` field of its own. `nil` for no cookies.
    ///
    /// Default: on Linux ``CookieJar/shared``, Courier's own RFC 6265bis jar, shared by every session that keeps
    /// the default; on Apple platforms ``FoundationCookieStore`` over `HTTPCookieStorage.shared`, as URLSession's
    /// default sessions. Give a session a `CookieJar()` of its own to keep its cookies apart (see the Cookies
    /// article).
    public var cookieStore: (any CookieStore)? = SessionConfiguration.defaultCookieStore
    /// Whether cookies are sent and stored at all (a request's `httpShouldHandleCookies` can also turn them off).
    public var httpShouldSetCookies: Bool = true
    /// How many redirects a task follows before failing with ``CourierError/tooManyRedirects(context:)``; default
    /// 16.
    public var maximumRedirects: Int = 16
    /// Credentials answered to Basic and Digest challenges when no authentication hook decides otherwise.
    public var credential: Credential?
    /// Where a `401` looks next when ``credential`` does not answer it, as URLSession does: the default credential
    /// stored for the challenge's protection space (the URL's scheme, host and port, the realm, Basic or Digest);
    /// default `URLCredentialStorage.shared`, and for ``ephemeral`` a new, empty storage of its own. A credential
    /// stored for one protection space never answers another (another host, port, realm, or plain http for https).
    public var urlCredentialStorage: URLCredentialStorage? = .shared
    /// Where `GET` responses are cached, as URLSession does (see the Sessions article); `nil`: no cache. Neither
    /// transport caches on its own.
    ///
    /// Default: ``sharedURLCache``, one cache for every session that keeps the default, as AFNetworking's and
    /// Alamofire's default sessions use `URLCache.shared`; ``ephemeral`` has a memory-only cache of its own. Set
    /// `nil` where every request must reach the server.
    public var urlCache: URLCache? = SessionConfiguration.sharedURLCache
    /// Whether ``urlCache`` serves more than one user, so that it keeps only what any user may see (RFC 9111's
    /// shared cache): no `Cache-Control: private` response; no response to a request with `Authorization` unless it
    /// says `public`, `s-maxage` or `must-revalidate`; no response to a request with a `Cookie` field unless `public`;
    /// no response that sets a cookie. Default `true`, since the default cache is the process's and a server app's
    /// requests are made for many users. Set `false` for a cache of one user's own (an app's), to keep private
    /// responses as a browser or URLSession does.
    public var urlCacheIsShared: Bool = true
    /// The cache policy of requests that leave theirs at `.useProtocolCachePolicy`; default
    /// `.useProtocolCachePolicy` (fresh stored responses are used, stale ones revalidated).
    public var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy

    /// Which HTTP versions requests may use: ``HTTPVersionPolicy/automatic`` (the default) negotiates HTTP/2 over TLS
    /// when the server offers it, ``HTTPVersionPolicy/http1Only`` keeps to HTTP/1.1. The version a response came
    /// with is ``DataResponse/httpVersion`` (and ``TransactionMetrics/networkProtocolName``). ``URLSessionTransport``
    /// cannot keep `https` to HTTP/1.1 (libcurl and Apple's URLSession negotiate HTTP/2 with no switch to stop
    /// them): its `https` requests fail with ``CourierError/unsupportedURL(_:reason:context:)`` under
    /// ``HTTPVersionPolicy/http1Only``.
    public var httpVersion: HTTPVersionPolicy = .automatic
    /// The proxies requests go through; default on Linux: what the environment says
    /// (``ProxySettings/environment(_:)``: `http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`, as curl reads them),
    /// read when the configuration is made; default on Apple platforms: `nil`, so that ``URLSessionTransport`` applies
    /// the system's proxy settings (it refuses a request that names a proxy; set ``ProxySettings/environment(_:)``
    /// yourself to use the variables with ``NIOTransport``). `nil` sends every request direct on ``NIOTransport``. Each request (and each redirect) is matched on its own URL. The
    /// security policy still checks the origin's certificate through the tunnel; ``CourierError/proxyFailed(proxy:authentication:reason:underlyingError:context:)``
    /// reports a proxy that refused. ``NIOTransport`` supports HTTP proxies with Basic credentials and SOCKS5
    /// proxies without credentials; see ``URLSessionTransport`` for what it can do.
    public var proxy: ProxySettings? = ProxySettings.platformDefault()
    /// Whether requests may go to Unix-domain sockets (`http+unix:`, `https+unix:` and `unix:` URLs, on
    /// ``NIOTransport``); default `false`, so such a URL fails with ``CourierError/unsupportedURL(_:reason:context:)``.
    /// Only a request the caller makes can reach a socket: a redirect never can, whatever this says.
    public var allowsUnixSocketURLs: Bool = false
    /// Whether a redirect from `https` to plain `http` is followed; default `false`: the task fails with
    /// ``CourierError/insecureRedirect(from:to:context:)``. A followed downgrade leaves the pinning policy behind.
    public var allowsInsecureRedirects: Bool = false
    /// The largest response body a task keeps in memory, in bytes (after decompression); default 100 MiB. Data
    /// tasks and the `async` calls that return a value hold the whole body: a server could otherwise send one
    /// without end and fill the memory. A body whose `Content-Length` says more, or that grows past it, fails the
    /// task with ``CourierError/responseTooLarge(limit:context:)`` (-1103) and its connection is closed, on every
    /// transport. Downloads (written to a file) and streamed bodies
    /// (``SessionManager/stream(_:acceptableStatusCodes:)``,
    /// ``SessionManager/dataStreamTask(with:completionHandler:)``) are not held and not limited. Values below 0
    /// count as 0.
    public var maximumInMemoryBodySize: Int = 100 * 1024 * 1024
    /// More header fields to remove when a redirect leaves the origin (scheme, host and port), beside the ones
    /// always removed: `Authorization`, `Proxy-Authorization` and `Cookie`. Names are matched without regard to
    /// case; default none.
    public var headersRemovedOnCrossOriginRedirect: Set<String> = []
    /// What watches every task of the session, each monitor on its own queue (see ``EventMonitor``); default none.
    public var eventMonitors: [any EventMonitor] = []
    /// Adapts every request before it is sent (also before each retry and redirect) and decides whether a failed
    /// one is sent again, e.g. ``RetryPolicy``; a request's own interceptor runs after it. Default `nil`.
    public var interceptor: (any RequestInterceptor)?
    /// Where each request is logged: one line at `.debug` (method, URL without query values, status, bytes,
    /// duration, attempt), its header fields at `.trace` with ``redactedHeaders`` hidden. Default `nil`; a logger
    /// above `.debug` (swift-log's default is `.info`) logs nothing and costs nothing.
    public var logger: Logger?
    /// Header fields whose values the log shows as `<redacted>`; default `Authorization`, `Cookie`, `Set-Cookie`,
    /// `Proxy-Authorization`. Add your API-key headers.
    public var redactedHeaders: Set<String> = ["Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"]
    /// Where request metrics go (a duration timer, counters of requests, errors by kind, retries and bytes, by
    /// method, status class and host; see the Interceptors article). Default `nil`: none (as is swift-metrics'
    /// no-op factory). Pass `MetricsSystem.factory` for the process's bootstrapped backend.
    public var metricsFactory: (any MetricsFactory)?
    /// Where request spans go: one client span per task and one per request it sends, with OpenTelemetry's HTTP
    /// attribute names, the context injected into the request's header fields. Default `nil`: none (as is the no-op
    /// tracer). Pass `InstrumentationSystem.tracer` for the process's bootstrapped tracer.
    public var tracer: (any Tracer)?

    /// The default configuration.
    public init() {}

    /// The default configuration (AFNetworking's `defaultSessionConfiguration`).
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// A configuration whose cookies, credentials and cache are its own: a new, empty ``CookieJar``,
    /// `URLCredentialStorage` and 4 MiB `URLCache`, all in memory and shared with no other configuration (as
    /// URLSession's ephemeral configuration keeps its storage private and off the disk).
    public static var ephemeral: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.cookieStore = CookieJar()
        configuration.urlCredentialStorage = URLCredentialStorage()
        configuration.urlCache = memoryURLCache(capacity: 4 * 1024 * 1024)
        return configuration
    }

    /// The cache sessions use by default: `URLCache.shared` on Apple platforms (its sizes are the system's; 512 KiB
    /// in memory and 10 MiB on disk on iOS), and on Linux a process-wide cache of 4 MiB in memory and nothing on
    /// disk (a library should not write into a server's home directory unasked). On Linux it is Courier's own, keyed
    /// by the whole URL: swift-corelibs-foundation's `URLCache` leaves the query out of its key.
    public static let sharedURLCache: URLCache = {
        #if canImport(FoundationNetworking)
            memoryURLCache(capacity: 4 * 1024 * 1024)
        #else
            URLCache.shared
        #endif
    }()

    /// A cache of `capacity` bytes in memory and none on disk.
    static func memoryURLCache(capacity: Int) -> URLCache {
        #if canImport(FoundationNetworking)
            MemoryURLCache(capacity: capacity)
        #else
            URLCache(memoryCapacity: capacity, diskCapacity: 0, directory: nil)
        #endif
    }

    /// ``cookieStore``'s default on this platform.
    static var defaultCookieStore: any CookieStore {
        #if canImport(Darwin)
            FoundationCookieStore(.shared)
        #else
            CookieJar.shared
        #endif
    }

    /// Foundation's cookie storage the session uses, when ``cookieStore`` is a ``FoundationCookieStore``; setting
    /// it sets ``cookieStore`` to one over the storage given (`nil`: no cookies).
    @available(
        *, deprecated, renamed: "cookieStore", message: "Use cookieStore: CookieJar, or FoundationCookieStore(storage)."
    )
    public var httpCookieStorage: HTTPCookieStorage? {
        get { (cookieStore as? FoundationCookieStore)?.storage }
        set { cookieStore = newValue.map { FoundationCookieStore($0) } }
    }
}
