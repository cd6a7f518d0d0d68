import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPSessionManager {
    /// The multipart request for a call: built by ``requestSerializer`` (see
    /// ``RequestSerializer/multipartRequest(method:url:parameters:boundary:constructingBody:)``), then `headers` set
    /// over the serializer's, as AFNetworking does (so they can even replace the `Content-Type`).
    public func makeMultipartRequest(
        method: String = "POST", urlString: String, parameters: Parameter? = nil,
        headers: HTTPHeaderFields = HTTPHeaderFields(), boundary: String = MultipartFormData.randomBoundary(),
        constructingBody: (inout MultipartFormData) throws -> Void
    ) throws -> MultipartRequest {
        var multipart = try requestSerializer.multipartRequest(
            method: method, url: url(for: urlString), parameters: parameters, boundary: boundary,
            constructingBody: constructingBody)
        for field in headers { multipart.urlRequest.setValue(field.value, forHTTPHeaderField: field.name) }
        return multipart
    }

    /// A multipart POST, serializing the response with `serializer`.
    ///
    /// The form builder comes last so it can be a trailing closure. Cancelling the calling Swift task cancels the
    /// upload.
    ///
    /// - Throws: what building the form throws (before anything is sent), or ``CourierError`` with the request,
    ///   response and body attached.
    public func post<Serializer: ResponseSerializer>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        progress: (@Sendable (TaskProgress) -> Void)? = nil, serializer: Serializer,
        constructingBody: (inout MultipartFormData) throws -> Void
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let multipart = try makeMultipartRequest(
            urlString: urlString, parameters: parameters, headers: headers, constructingBody: constructingBody)
        return try await upload(
            multipart.urlRequest, body: multipart.body, progress: progress, serializer: serializer)
    }

    /// A multipart POST, decoding the response body as `type` (JSON by default).
    public func post<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        progress: (@Sendable (TaskProgress) -> Void)? = nil, as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON, constructingBody: (inout MultipartFormData) throws -> Void
    ) async throws -> DataResponse<Value> {
        try await post(
            urlString, parameters: parameters, headers: headers, progress: progress,
            serializer: DecodableResponseSerializer(type, decoder: decoder), constructingBody: constructingBody)
    }

    /// A multipart POST, parsing the response body as ``JSON``.
    public func post(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        progress: (@Sendable (TaskProgress) -> Void)? = nil,
        constructingBody: (inout MultipartFormData) throws -> Void
    ) async throws -> DataResponse<JSON?> {
        try await post(
            urlString, parameters: parameters, headers: headers, progress: progress,
            serializer: JSONResponseSerializer(), constructingBody: constructingBody)
    }

    /// Sends `request` with `body` (data, a file, a stream or a multipart form) and serializes the response.
    ///
    /// A body of known length goes out with `Content-Length`, one of unknown length chunked (on
    /// ``NIOTransport``). Cancelling the calling Swift task cancels the upload.
    ///
    /// A retrier (the session's ``SessionConfiguration/interceptor``, or `interceptor` after it) can send the body
    /// again when it is replayable: data, a file and a multipart form are; a stream is not.
    public func upload<Serializer: ResponseSerializer>(
        _ request: URLRequest, body: HTTPRequestBody, progress: (@Sendable (TaskProgress) -> Void)? = nil,
        serializer: Serializer, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        try await run(request, body: body, uploadProgress: progress, serializer: serializer, interceptor: interceptor)
    }
}
