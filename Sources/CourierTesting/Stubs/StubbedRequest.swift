import Courier
import Foundation

/// A request a ``StubTransport`` (or a ``ReplayTransport``) saw, with its whole body, for a test's assertions.
public struct StubbedRequest: Sendable, CustomStringConvertible {
    /// The method.
    public var method: String
    /// The URL.
    public var url: URL
    /// The header fields, in order, as the session sent them.
    public var headers: HTTPHeaderFields
    /// The whole body; empty when there was none.
    public var body: Data

    /// Creates a request record.
    public init(method: String, url: URL, headers: HTTPHeaderFields = HTTPHeaderFields(), body: Data = Data()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The body decoded as `type` from JSON.
    ///
    /// - Throws: what `JSONDecoder` throws.
    public func decodedBody<Value: Decodable>(as type: Value.Type, decoder: JSONDecoder = JSONDecoder()) throws
        -> Value
    {
        try decoder.decode(type, from: body)
    }

    /// E.g. `POST https://api.example.com/users (14 bytes)`.
    public var description: String {
        "\(method) \(url.absoluteString)" + (body.isEmpty ? "" : " (\(body.count) bytes)")
    }

    /// `request`'s parts, with its whole body read: the bytes go to the stub, as they would to a server. A body
    /// larger than `limit` fails with ``CourierError/requestFailed(underlyingError:context:)``.
    static func read(_ request: TransportRequest, limit: Int = 256 << 20) async throws -> StubbedRequest {
        var body = Data()
        if let whole = request.body?.data {
            body = whole
        } else if let streamed = request.body {
            for try await chunk in try streamed.makeChunks() {
                body.append(chunk)
                guard body.count <= limit else {
                    throw CourierError.requestFailed(
                        underlyingError: StubError("a request body of more than \(limit) bytes"),
                        context: CourierError.Context())
                }
            }
        }
        if !body.isEmpty { request.bodyProgress?(Int64(body.count)) }
        return StubbedRequest(method: request.method, url: request.url, headers: request.headers, body: body)
    }
}

/// What went wrong inside a test transport, in words: an unmatched request, a body too large, a HAR file that
/// cannot be read.
public struct StubError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What happened.
    public var description: String

    /// Creates an error with `description`.
    public init(_ description: String) { self.description = description }

    /// The description.
    public var errorDescription: String? { description }
}
