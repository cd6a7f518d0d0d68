import Courier
import Foundation

/// `--download`, `--output` and `--continue`.
struct SaveOptions: Sendable, Hashable {
    /// `--output`, else the name comes from the response.
    var output: String?
    /// `--continue`.
    var resume: Bool
}

/// Everything a request run needs, parsed and checked.
struct RequestOptions: Sendable {
    var plan: RequestPlan
    var print: PrintOptions
    var pretty: PrettyMode
    var offline: Bool
    var download: SaveOptions?
    var timeout: TimeInterval?
    var maxRedirects: Int
    var follow: Bool
    var auth: AuthOptions?
    var checkStatus: Bool
    var tls: TLSOptions
    /// `--max-time`: the deadline for the whole transfer.
    var maxTime: TimeInterval? = nil
    /// `--allow-insecure-redirects`: follow a redirect from https to http.
    var allowsInsecureRedirects = false
    /// `--retry`: how many times a failed request is sent again (``RetryPolicy``'s statuses and errors).
    var retries = 0
    /// `--verbose`: the timings of each exchange (``TransactionMetrics``) on standard error.
    var showsMetrics = false
    /// `--http1` keeps to HTTP/1.1; otherwise HTTP/2 is used when the server offers it over TLS.
    var httpVersion: HTTPVersionPolicy = .automatic
    /// `--session NAME` or `--session-read-only NAME`.
    var session: (name: String, readOnly: Bool)? = nil
    /// `--proxy`, else the environment's proxies.
    var proxy: ProxySettings? = .environment()
    /// `-b`/`--cookie`: cookies as `NAME=VALUE`, or a cookie file in curl's format to start the jar with.
    var cookie: String? = nil
    /// `--cookie-jar`: where the jar is written at the end, in curl's format.
    var cookieJar: String? = nil
    /// `--connect-timeout`: how long a connection may take to be made.
    var connectTimeout: TimeInterval? = nil
    /// `--resolve`: addresses to connect to for some hosts and ports.
    var resolve: [ResolveRule] = []
    /// `--connect-to`: hosts and ports to connect to instead, for some hosts and ports.
    var connectTo: [ConnectToRule] = []
    /// `--record`: the HAR file every exchange is written to.
    var record: String? = nil
    /// `--replay`: the HAR file that answers instead of the network.
    var replay: String? = nil
    /// `--curl`: print the curl command instead of sending.
    var curl = false
    /// The whole body from `--raw`, `@FILE` or standard input, instead of data fields.
    var rawBody: RawBody? = nil
    /// `--unix-socket`: the socket every request goes to.
    var unixSocket: UnixSocket? = nil
    /// Credentials from the netrc file, used when neither the command nor the session gives any.
    var netrcAuth: AuthOptions? = nil
    /// `--meta`: the elapsed time and phases after the body.
    var meta = false
    /// `-w/--write-out`: curl's format, printed after the transfer.
    var writeOut: String? = nil
}
