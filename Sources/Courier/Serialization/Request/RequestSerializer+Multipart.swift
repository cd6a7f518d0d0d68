import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension RequestSerializer {
    /// Builds a `multipart/form-data` request (`multipartFormRequestWithMethod:URLString:parameters:…`).
    ///
    /// The serializer builds the request head (default headers, request properties) without parameters; then the
    /// form gets `parameters` first, flattened with the query-string rules (``QueryString/pairs(_:arrayEncoding:)``)
    /// but with field names left unescaped (`tags[]`, `user[name]`), data values sent raw and a null as an empty
    /// body; then the parts `constructingBody` appends, in order. `Content-Type` and `Content-Length` are set from
    /// the form.
    ///
    /// A form with no parts at all leaves the request as the serializer made it, as in AFNetworking.
    ///
    /// ```swift
    /// let multipart = try HTTPRequestSerializer().multipartRequest(
    ///     method: "POST", urlString: "https://example.com/upload", parameters: ["album": "summer"]
    /// ) { form in
    ///     try form.append(fileURL: photo, name: "photo")
    /// }
    /// manager.uploadTask(with: multipart) { response, object, error in handle(object, error) }.resume()
    /// ```
    ///
    /// - Parameters:
    ///   - method: the method, e.g. `POST`.
    ///   - urlString: the absolute URL.
    ///   - parameters: fields sent before the parts, flattened as described above.
    ///   - boundary: the form's boundary; random by default.
    ///   - constructingBody: appends the parts; an error it throws is rethrown.
    /// - Throws: ``CourierError/multipartEncodingFailed(reason:fileURL:underlyingError:)`` for GET and HEAD, which
    ///   carry no body; what the serializer or `constructingBody` throws.
    public func multipartRequest(
        method: String, urlString: String, parameters: Parameter? = nil,
        boundary: String = MultipartFormData.randomBoundary(),
        constructingBody: (inout MultipartFormData) throws -> Void = { _ in }
    ) throws -> MultipartRequest {
        try multipartRequest(method, parameters: parameters, boundary: boundary, constructingBody: constructingBody) {
            try request(method: method, urlString: urlString, parameters: nil)
        }
    }

    /// ``multipartRequest(method:urlString:parameters:boundary:constructingBody:)`` for a parsed URL.
    public func multipartRequest(
        method: String, url: URL, parameters: Parameter? = nil,
        boundary: String = MultipartFormData.randomBoundary(),
        constructingBody: (inout MultipartFormData) throws -> Void = { _ in }
    ) throws -> MultipartRequest {
        try multipartRequest(method, parameters: parameters, boundary: boundary, constructingBody: constructingBody) {
            try request(method: method, url: url, parameters: nil)
        }
    }

    /// The form for the request `makeRequest` serializes without parameters, once `method` is known to carry a body.
    private func multipartRequest(
        _ method: String, parameters: Parameter?, boundary: String,
        constructingBody: (inout MultipartFormData) throws -> Void, makeRequest: () throws -> URLRequest
    ) throws -> MultipartRequest {
        try Self.refuseBodyless(method)
        var request = try makeRequest()
        var form = MultipartFormData(boundary: boundary)
        if let parameters {
            for pair in QueryString.pairs(parameters, arrayEncoding: multipartArrayEncoding) {
                form.append(Self.fieldData(pair.value, boolEncoding: multipartBoolEncoding), name: pair.field)
            }
        }
        try constructingBody(&form)
        guard !form.isEmpty else {
            let body = request.httpBody ?? Data()
            request.httpBody = nil
            return MultipartRequest(urlRequest: request, body: .data(body))
        }
        request.httpBody = nil
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.setValue(String(form.contentLength), forHTTPHeaderField: "Content-Length")
        return MultipartRequest(urlRequest: request, body: form.makeBody())
    }

    private static func refuseBodyless(_ method: String) throws {
        let upper = method.uppercased()
        guard upper != "GET", upper != "HEAD" else {
            throw CourierError.multipartEncodingFailed(
                reason: "A multipart form cannot be sent with \(upper): the method has no body.", fileURL: nil,
                underlyingError: nil)
        }
    }

    private static func fieldData(_ value: Parameter, boolEncoding: QueryString.BoolEncoding) -> Data {
        switch value {
        case .data(let data): return data
        case .null: return Data()
        default: return Data((value.leafString(boolEncoding: boolEncoding) ?? "").utf8)
        }
    }

    /// The serializer's array naming, for serializers built on ``HTTPRequestSerializer``; brackets otherwise.
    private var multipartArrayEncoding: QueryString.ArrayEncoding {
        baseSerializer?.arrayEncoding ?? .brackets
    }

    /// The serializer's Boolean rendering, for serializers built on ``HTTPRequestSerializer``; `1`/`0` otherwise.
    private var multipartBoolEncoding: QueryString.BoolEncoding {
        baseSerializer?.boolEncoding ?? .numeric
    }
}
