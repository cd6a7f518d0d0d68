import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request serializer built on an ``HTTPRequestSerializer``: it shares its headers, request properties and
/// URI-method rules, and forwards its header methods.
///
/// Conforming types use `@dynamicMemberLookup` so the base serializer's properties read as their own:
/// `json.timeoutInterval = 5` sets `json.http.timeoutInterval`.
public protocol HTTPRequestSerializerBased: RequestSerializer {
    /// The serializer whose headers, properties and query-string rules this one uses.
    var http: HTTPRequestSerializer { get set }

    /// Writes `parameters` as the body of a request whose method does not encode parameters in its URI.
    func encodeBody(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest
}

extension HTTPRequestSerializerBased {
    /// ``http``: for the methods that put their parameters in the URL, this serializer's requests are its.
    public var baseSerializer: HTTPRequestSerializer? { http }

    /// Reads and writes the base serializer's properties.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<HTTPRequestSerializer, Value>) -> Value {
        get { http[keyPath: keyPath] }
        set { http[keyPath: keyPath] = newValue }
    }

    /// Sets a default header on the base serializer; `nil` removes it.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        http.setValue(value, forHTTPHeaderField: field)
    }

    /// The base serializer's default header for a field.
    public func value(forHTTPHeaderField field: String) -> String? {
        http.value(forHTTPHeaderField: field)
    }

    /// Sets HTTP Basic authorization on the base serializer.
    public mutating func setAuthorization(username: String, password: String) {
        http.setAuthorization(username: username, password: password)
    }

    /// Removes the `Authorization` header from the base serializer.
    public mutating func clearAuthorization() {
        http.clearAuthorization()
    }

    /// Builds a request with the base serializer's properties and serializes `parameters` into it.
    public func request(method: String, urlString: String, parameters: Parameter?) throws -> URLRequest {
        var request = try http.makeRequest(method: method, urlString: urlString)
        return try serialize(made: &request, parameters: parameters)
    }

    /// Builds a request for a parsed URL with the base serializer's properties and serializes `parameters` into it.
    public func request(method: String, url: URL, parameters: Parameter?) throws -> URLRequest {
        var request = try http.makeRequest(method: method, url: url)
        return try serialize(made: &request, parameters: parameters)
    }

    /// GET, HEAD and DELETE (see ``HTTPRequestSerializer/methodsEncodingParametersInURI``) behave exactly like the
    /// base serializer; every other method gets the default headers and ``encodeBody(_:parameters:)``.
    public func serialize(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest {
        var request = request
        return try serialize(made: &request, parameters: parameters)
    }

    /// ``serialize(_:parameters:)`` changing `request` in place up to the body, so that a request made for the call
    /// is not copied by Foundation (see ``HTTPRequestSerializer/serialize(into:parameters:)``).
    private func serialize(made request: inout URLRequest, parameters: Parameter?) throws -> URLRequest {
        if http.encodesParametersInURI(request.httpMethod) {
            try http.serialize(into: &request, parameters: parameters)
            return request
        }
        http.applyHeaders(to: &request)
        return try encodeBody(request, parameters: parameters)
    }
}

extension URLRequest {
    /// A copy with `parameters` encoded by `encode` as its body (see ``withBody(_:defaultContentType:)``); itself
    /// when there are none.
    func withBody(
        encoding parameters: Parameter?, by encode: (Parameter) throws -> Data, defaultContentType contentType: String
    ) rethrows -> URLRequest {
        guard let parameters else { return self }
        return withBody(try encode(parameters), defaultContentType: contentType)
    }

    /// A copy with `body` as its body, and `contentType` as its `Content-Type` unless it names one already.
    func withBody(_ body: Data, defaultContentType contentType: String) -> URLRequest {
        var request = self
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        request.httpBody = body
        return request
    }
}
