import Courier
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls with swift-http-types' `HTTPRequest` and `HTTPResponse`, named as `URLSession`'s in HTTPTypesFoundation.
///
/// They go through the session's public streaming API (``Courier/SessionManager/stream(_:body:acceptableStatusCodes:)``),
/// so its configuration, security policy, interceptors, retrier, cookies, metrics and event monitors apply as to any
/// other request. Like `URLSession`'s, they accept every status: a `404` is a response, not an error. The response's
/// fields are read from Courier's ``Courier/ResponseHead``, so on ``Courier/NIOTransport`` (the default on Linux)
/// their order, case and repetitions are the server's; ``Courier/URLSessionTransport`` has only what Foundation's
/// `HTTPURLResponse` kept of them.
///
/// A request without a scheme and an authority (only a path) is sent to an ``Courier/HTTPSessionManager``'s
/// ``Courier/HTTPSessionManager/baseURL`` with its path appended (`/users?page=2` to `https://api.example.com/v1` is
/// `https://api.example.com/v1/users?page=2`); any other manager refuses it.
extension SessionManager {
    /// Sends `request` and returns the whole body with the response.
    ///
    /// Cancelling the calling Swift task cancels the request.
    ///
    /// - Throws: ``Courier/CourierError``: the session's errors, ``Courier/CourierError/invalidURL(_:)`` for a
    ///   request that has no URL here, and `HTTPResponse.init(_:)`'s for a head `HTTPResponse` cannot hold.
    public func data(for request: HTTPRequest) async throws -> (Data, HTTPResponse) {
        try await collect(stream(for: request, body: nil))
    }

    /// Sends `request` with `bodyData` as its body and returns the whole response body with the response; see
    /// ``data(for:)``.
    public func upload(for request: HTTPRequest, from bodyData: Data) async throws -> (Data, HTTPResponse) {
        try await collect(stream(for: request, body: .data(bodyData)))
    }

    /// Sends `request` with the file at `fileURL` streamed as its body (in constant memory, with its exact
    /// `Content-Length`) and returns the whole response body with the response; see ``data(for:)``.
    ///
    /// - Throws: also ``Courier/CourierError/fileOperationFailed(reason:underlyingError:context:)`` when the file
    ///   cannot be read.
    public func upload(for request: HTTPRequest, fromFile fileURL: URL) async throws -> (Data, HTTPResponse) {
        let body: HTTPRequestBody
        do {
            body = try HTTPRequestBody.file(fileURL)
        } catch {
            throw CourierError.fileOperationFailed(
                reason: "File URL not reachable.", underlyingError: error, context: CourierError.Context())
        }
        return try await collect(stream(for: request, body: body))
    }

    /// Sends `request` with `body` (data, a file or an async sequence, streamed as the connection takes it) and
    /// returns the whole response body with the response; see ``data(for:)``.
    public func upload(for request: HTTPRequest, body: HTTPRequestBody) async throws -> (Data, HTTPResponse) {
        try await collect(stream(for: request, body: body))
    }

    /// Sends `request`, with `body` when there is one, and returns as soon as the response head has arrived, with
    /// the body's chunks to read as they arrive (with backpressure: see ``Courier/DataStreamTask``).
    ///
    /// Cancelling the calling Swift task before the head arrives cancels the request; afterwards, stop iterating
    /// the chunks (or cancel the iterating task). Keep the manager while you read the body: releasing it cancels
    /// its tasks.
    ///
    /// - Throws: ``Courier/CourierError``, as ``data(for:)``.
    public func stream(for request: HTTPRequest, body: HTTPRequestBody? = nil) async throws -> (
        HTTPResponse, ResponseChunks
    ) {
        let (response, streamed) = try await streamHTTPResponse(urlRequest(for: request), body: body)
        return (response, streamed.chunks)
    }

    /// The `URLRequest` this manager sends for `request`: `URLRequest.init(_:body:)`, with a request that has only a
    /// path resolved against an ``Courier/HTTPSessionManager``'s base URL (see the extension's discussion).
    ///
    /// - Throws: ``Courier/CourierError/invalidURL(_:)`` when the request makes no URL here.
    public func urlRequest(for request: HTTPRequest, body: Data? = nil) throws(CourierError) -> URLRequest {
        if request.scheme == nil, request.authority == nil, let path = request.path,
            let baseURL = (self as? HTTPSessionManager)?.baseURL
        {
            let url = try baseURL.appendingRequestTarget(path)
            return URLRequest(request, url: url, body: body)
        }
        return try URLRequest(request, body: body)
    }

    /// Streams `request` with `body`, accepting every status, and returns the head as an `HTTPResponse` with the
    /// streamed response; the task is cancelled when the head cannot be converted.
    package func streamHTTPResponse(_ request: URLRequest, body: HTTPRequestBody?) async throws -> (
        HTTPResponse, StreamedResponse
    ) {
        let streamed =
            if let body {
                try await stream(request, body: body, acceptableStatusCodes: nil)
            } else {
                try await stream(request, acceptableStatusCodes: nil)
            }
        do {
            guard let head = streamed.task.responseHead else {
                throw CourierError.badServerResponse(
                    reason: "the response ended before its head arrived", underlyingError: nil,
                    context: CourierError.Context(request: request))
            }
            return (try HTTPResponse(head), streamed)
        } catch {
            streamed.task.cancel()
            throw error
        }
    }

    private func collect(_ streamed: (HTTPResponse, ResponseChunks)) async throws -> (Data, HTTPResponse) {
        var data = Data()
        for try await chunk in streamed.1 { data.append(chunk) }
        return (data, streamed.0)
    }
}
