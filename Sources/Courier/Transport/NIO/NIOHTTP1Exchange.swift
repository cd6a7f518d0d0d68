import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One collected exchange on ``NIOHTTP1Pool``: the request to write and where its result goes.
///
/// Whoever holds the exchange (the pool's queue, a connection attempt, a connection's handler) may finish it; the
/// first ``finish(_:sawHead:)`` wins and later ones are ignored, so a cancellation racing the response completes the
/// task exactly once. A cancelled exchange still in the pool's queue stays there until its turn and is then
/// skipped.
struct NIOHTTP1Exchange: Sendable, NIOHTTP1PoolWaiter {
    /// The result: the head and whole body, or the error; `sawHead` tells whether any response arrived, for the
    /// transport's one retry of a request lost on a stale connection.
    typealias Finish = @Sendable (_ result: Result<NIOBodyGatherer.Gathered, any Error>, _ sawHead: Bool) -> Void

    private struct State {
        var finish: Finish?
        /// The connection or stream running the exchange, once it has one.
        var carrier: (any NIOExchangeCarrier)?
    }

    let head: HTTPRequestHead
    let body: ByteBuffer?
    /// Called whenever bytes arrive, for the session's idle timeout.
    let activity: @Sendable () -> Void
    /// Called when the head of a response with a small declared body arrives (see ``NIOBodyGatherer/smallBody``).
    let smallHead: (@Sendable () -> Void)?
    /// The most body bytes to gather (``TransportRequest/maximumCollectedBodySize``); `nil` for no limit.
    let maximumBodySize: Int?
    private let state: Locked<State>

    /// An exchange that `cancellation` aborts from now on.
    init(
        head: HTTPRequestHead, body: ByteBuffer?, maximumBodySize: Int?, cancellation: ExchangeCancellation,
        activity: @escaping @Sendable () -> Void, smallHead: (@Sendable () -> Void)?, finish: @escaping Finish
    ) {
        self.head = head
        self.body = body
        self.maximumBodySize = maximumBodySize.map { max($0, 0) }
        self.activity = activity
        self.smallHead = smallHead
        state = Locked(State(finish: finish))
        let exchange = self
        cancellation.onCancel { exchange.cancel() }
    }

    /// Whether the exchange has been finished (by its response, an error or a cancellation).
    var isFinished: Bool { state.withLock { $0.finish == nil } }

    /// Hands the result over, the first time only.
    func finish(_ result: Result<NIOBodyGatherer.Gathered, any Error>, sawHead: Bool) {
        let finish = state.withLock { state -> Finish? in
            defer { state.finish = nil }
            return state.finish
        }
        finish?(result, sawHead)
    }

    /// Records the connection or stream that runs the exchange, so a cancellation can close it.
    func attach(to carrier: any NIOExchangeCarrier) {
        state.withLock { $0.carrier = carrier }
    }

    /// Fails the exchange as cancelled and has its connection, if any, give up on the response.
    private func cancel() {
        let (finish, connection) = state.withLock { state in
            defer { state.finish = nil }
            return (state.finish, state.carrier)
        }
        guard let finish else { return }
        finish(.failure(CourierError.cancelled(context: CourierError.Context())), false)
        connection?.abandonFinishedExchange()
    }
}

/// What the pool needs of a request's URL: where to connect, the request target and the `Host` field. Made once per
/// method and URL and kept (see ``NIOTransport``'s templates), since it reads the URL's text.
struct NIOHTTP1Target: Sendable {
    /// Host and port of the connection, and for `https` how it makes TLS; the pool keeps connections per origin.
    struct Origin: Hashable, Sendable {
        var host: String
        var port: Int
        /// Set by the transport for an `https` URL (the target itself knows only that it needs one).
        var tls: NIOTLSProfile?
    }

    let origin: Origin
    /// The path and query as they go on the request line, percent-encoded as the URL has them.
    let target: String
    /// The `Host` field: the URL's authority without user information.
    let hostField: String

    /// Whether the URL is `https`: the origin needs a ``NIOTLSProfile``.
    let isSecure: Bool

    /// The target of an `http` or `https` URL with a host, no user information and a port in range; `nil` for
    /// anything else, which then goes through AsyncHTTPClient.
    init?(url: URL) {
        let text = url.absoluteString.utf8
        let schemeLength: Int
        if URLCheck.isPlainHTTP(url) {
            schemeLength = 4
        } else if URLCheck.isHTTPS(url) {
            schemeLength = 5
        } else {
            return nil
        }
        guard text.dropFirst(schemeLength).starts(with: "://".utf8) else { return nil }
        isSecure = schemeLength == 5
        // After `http://` or `https://`: the authority runs to the first `/`, `?` or `#`.
        let afterScheme = text.index(text.startIndex, offsetBy: schemeLength + 3)
        let authorityEnd =
            text[afterScheme...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? text.endIndex
        let authority = text[afterScheme..<authorityEnd]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")),
            let host = url.host, !host.isEmpty
        else { return nil }
        let port = url.port ?? (isSecure ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
        let fragmentStart = text[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? text.endIndex
        let pathAndQuery = String(decoding: text[authorityEnd..<fragmentStart], as: UTF8.self)
        // Bytes a request line cannot carry (a URL never holds them, but the check is one pass).
        guard !pathAndQuery.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        origin = Origin(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port)
        target = pathAndQuery.isEmpty ? "/" : pathAndQuery.hasPrefix("?") ? "/" + pathAndQuery : pathAndQuery
        hostField = String(decoding: authority, as: UTF8.self)
    }

    /// The request head for `method` with `fields`: framing set for a body of `bodyLength` bytes (none or empty:
    /// `Content-Length: 0` only for methods that expect a body), `Host`
    /// added when missing, and every field checked as AsyncHTTPClient checks them (RFC 9110 token names; no control
    /// bytes but tab in values), so nothing a caller puts in a field can split the request.
    func head(method: String, fields: HTTPHeaderFields, bodyLength: Int?) throws -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.fields.count + 2)
        var hasHost = false
        var badNames: [String] = []
        var badValues: [String] = []
        for field in fields {
            if !Self.isToken(field.name) { badNames.append(field.name) }
            if !Self.isFieldValue(field.value) { badValues.append(field.value) }
            if field.name.caseInsensitiveEquals("content-length")
                || field.name.caseInsensitiveEquals("transfer-encoding")
            {
                continue  // the framing is the transport's
            }
            if field.name.caseInsensitiveEquals("host") { hasHost = true }
            headers.add(name: field.name, value: field.value)
        }
        if !badNames.isEmpty { throw HTTPClientError.invalidHeaderFieldNames(badNames) }
        if !badValues.isEmpty { throw HTTPClientError.invalidHeaderFieldValues(badValues) }
        if !hasHost { headers.add(name: "Host", value: hostField) }
        if let bodyLength, bodyLength > 0 {
            if method == "TRACE" { throw HTTPClientError.traceRequestWithBody }
            headers.add(name: "Content-Length", value: String(bodyLength))
        } else if !["GET", "HEAD", "DELETE", "CONNECT", "TRACE"].contains(method) {
            headers.add(name: "Content-Length", value: "0")
        }
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target, headers: headers)
    }

    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    private static func isFieldValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == UInt8(ascii: "\t") || ($0 > 0x1F && $0 != 0x7F) }
    }
}
