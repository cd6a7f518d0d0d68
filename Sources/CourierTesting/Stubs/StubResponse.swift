import Courier
import Foundation

/// What a stub answers: a status, header fields and a body (bytes, a file, JSON, or chunks with delays between
/// them), after some latency; or a failure instead (a timeout, a refused connection, a connection lost in the
/// middle of the body).
///
/// ```swift
/// let found = StubResponse.json(#"{"id":1}"#)
/// let missing = StubResponse.status(404)
/// let moved = StubResponse.redirect(to: "/login")  // the session's redirect policy runs
/// let streamed = StubResponse.chunks(["a", "b", "c"].map { Data($0.utf8) }, every: .milliseconds(50))
/// let timeout = StubResponse.failure(.timedOut)
/// let cut = StubResponse.text("partial").losingConnection(afterBytes: 3)
/// let slow = StubResponse.json("[]").delayed(by: .milliseconds(200))
/// ```
public struct StubResponse: Sendable {
    /// Where the body comes from.
    public enum Body: Sendable {
        /// These bytes, at once.
        case data(Data)
        /// A file's contents, read when the response is sent.
        case file(URL)
        /// These chunks, `interval` apart (the first after one `interval` too).
        case chunks([Data], interval: Duration)
    }

    /// How an exchange fails, with the ``CourierError`` each gives.
    public enum Failure: Sendable {
        /// ``CourierError/timedOut(context:)`` (-1001).
        case timedOut
        /// ``CourierError/cannotConnect(host:underlyingError:context:)`` (-1004): the connection was refused.
        case cannotConnect
        /// ``CourierError/connectionLost(underlyingError:context:)`` (-1005).
        case connectionLost
        /// Never answers: the exchange waits until it is cancelled (by the session's timeout, say).
        case noAnswer
        /// This error.
        case error(CourierError)

        func error(for url: URL) -> CourierError {
            switch self {
            case .timedOut, .noAnswer: .timedOut(context: CourierError.Context())
            case .cannotConnect:
                .cannotConnect(
                    host: url.host ?? "", underlyingError: StubError("connection refused (stubbed)"),
                    context: CourierError.Context())
            case .connectionLost:
                .connectionLost(
                    underlyingError: StubError("connection lost (stubbed)"), context: CourierError.Context())
            case .error(let error): error
            }
        }
    }

    /// The status code.
    public var statusCode: Int
    /// The header fields. `Content-Length` is added for a body of known length unless it is here.
    public var headers: HTTPHeaderFields
    /// The body.
    public var body: Body
    /// How long before the head arrives.
    public var latency: Duration = .zero
    /// Instead of answering, fail (after ``latency``).
    public var failure: Failure?
    /// Send this many body bytes, then lose the connection (``CourierError/connectionLost(underlyingError:context:)``).
    public var connectionLostAfterBytes: Int?
    /// The version the response claims; default `HTTP/1.1`.
    public var httpVersion: String = "HTTP/1.1"

    /// A response with `statusCode`, `headers` and `body`.
    public init(statusCode: Int, headers: HTTPHeaderFields = HTTPHeaderFields(), body: Body = .data(Data())) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// `statusCode` with `body` (none by default).
    public static func status(_ statusCode: Int, headers: HTTPHeaderFields = HTTPHeaderFields(), body: Data = Data())
        -> StubResponse
    {
        StubResponse(statusCode: statusCode, headers: headers, body: .data(body))
    }

    /// `text` in UTF-8, as `text/plain; charset=utf-8`.
    public static func text(_ text: String, status: Int = 200, headers: HTTPHeaderFields = HTTPHeaderFields())
        -> StubResponse
    {
        StubResponse(
            statusCode: status, headers: headers.adding("Content-Type", "text/plain; charset=utf-8"),
            body: .data(Data(text.utf8)))
    }

    /// A JSON document given as text, as `application/json`.
    public static func json(_ json: String, status: Int = 200, headers: HTTPHeaderFields = HTTPHeaderFields())
        -> StubResponse
    {
        StubResponse(
            statusCode: status, headers: headers.adding("Content-Type", "application/json"),
            body: .data(Data(json.utf8)))
    }

    /// `value` encoded as JSON, as `application/json`.
    ///
    /// - Throws: what `encoder` throws for `value`.
    public static func json(
        encoding value: some Encodable, status: Int = 200, headers: HTTPHeaderFields = HTTPHeaderFields(),
        encoder: JSONEncoder = JSONEncoder()
    ) throws -> StubResponse {
        StubResponse(
            statusCode: status, headers: headers.adding("Content-Type", "application/json"),
            body: .data(try encoder.encode(value)))
    }

    /// A file's contents, read when the response is sent, with `contentType` (`application/octet-stream` by
    /// default).
    public static func file(
        _ url: URL, status: Int = 200, contentType: String = "application/octet-stream",
        headers: HTTPHeaderFields = HTTPHeaderFields()
    ) -> StubResponse {
        StubResponse(statusCode: status, headers: headers.adding("Content-Type", contentType), body: .file(url))
    }

    /// `chunks`, `interval` apart, with no `Content-Length` (as a server streaming its answer).
    public static func chunks(
        _ chunks: [Data], every interval: Duration, status: Int = 200, headers: HTTPHeaderFields = HTTPHeaderFields()
    ) -> StubResponse {
        StubResponse(statusCode: status, headers: headers, body: .chunks(chunks, interval: interval))
    }

    /// A server-sent event stream (`text/event-stream`): each of `events` is one event's lines (e.g.
    /// `"event: tick\ndata: 1"`), sent `interval` apart.
    public static func events(_ events: [String], every interval: Duration = .zero) -> StubResponse {
        .chunks(
            events.map { Data(($0 + "\n\n").utf8) }, every: interval,
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"])
    }

    /// A redirect to `location` (absolute, or relative to the request's URL) with `status` (302 by default), for
    /// the session's redirect policy to follow or not.
    public static func redirect(to location: String, status: Int = 302) -> StubResponse {
        StubResponse(statusCode: status, headers: ["Location": location])
    }

    /// A failure instead of a response.
    public static func failure(_ failure: Failure) -> StubResponse {
        var response = StubResponse(statusCode: 0)
        response.failure = failure
        return response
    }

    /// This response, its head arriving after `latency`.
    public func delayed(by latency: Duration) -> StubResponse {
        var copy = self
        copy.latency = latency
        return copy
    }

    /// This response, its connection lost after `count` body bytes.
    public func losingConnection(afterBytes count: Int) -> StubResponse {
        var copy = self
        copy.connectionLostAfterBytes = max(0, count)
        return copy
    }

    /// This response, with the header field `name: value` added.
    public func header(_ name: String, _ value: String) -> StubResponse {
        var copy = self
        copy.headers.add(name: name, value: value)
        return copy
    }
}

extension HTTPHeaderFields {
    /// These fields with `name: value` added unless a field `name` is there.
    func adding(_ name: String, _ value: String) -> HTTPHeaderFields {
        guard self[name] == nil else { return self }
        var copy = self
        copy.add(name: name, value: value)
        return copy
    }
}
