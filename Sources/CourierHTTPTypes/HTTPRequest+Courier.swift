import Courier
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// The `URLRequest` Courier sends for `request`: its URL (scheme, authority and path, with the query exactly as
    /// given), method, header fields and, when given, `body`.
    ///
    /// `URLRequest` holds one value per field name, so repeated fields are joined in order under the first one's
    /// name, with `; ` for `Cookie` (RFC 9113 §8.2.3) and `, ` for every other field (RFC 9110 §5.3, which makes
    /// the joined field mean the same). Courier sends a `URLRequest`'s fields sorted by name.
    ///
    /// For a body streamed from a file or an async sequence, leave `body` `nil` and pass a ``Courier/HTTPRequestBody``
    /// to ``Courier/SessionManager/stream(_:body:acceptableStatusCodes:)`` or
    /// ``Courier/SessionManager/uploadTask(with:body:progress:completionHandler:)`` with this request.
    ///
    /// - Throws: ``Courier/CourierError/invalidURL(_:)`` when the request has no scheme or authority (a
    ///   relative request: see ``Courier/SessionManager/data(for:)`` for how an ``Courier/HTTPSessionManager``
    ///   resolves one) or its parts do not make a URL.
    public init(_ request: HTTPRequest, body: Data? = nil) throws(CourierError) {
        guard let url = request.url else { throw CourierError.invalidURL(request.urlDescription) }
        self.init(request, url: url, body: body)
    }

    /// The request for `request` sent to `url`, which the caller has made from the request's parts.
    package init(_ request: HTTPRequest, url: URL, body: Data?) {
        self.init(url: url)
        httpMethod = request.method.rawValue
        var joined: [(name: HTTPField.Name, value: String)] = []
        joined.reserveCapacity(request.headerFields.count)
        // Names hash (case-insensitively): a peer may send thousands of distinct ones.
        var positions = [HTTPField.Name: Int](minimumCapacity: request.headerFields.count)
        for field in request.headerFields {
            if let index = positions[field.name] {
                joined[index].value += (field.name == .cookie ? "; " : ", ") + field.value
            } else {
                positions[field.name] = joined.count
                joined.append((field.name, field.value))
            }
        }
        for (name, value) in joined { setValue(value, forHTTPHeaderField: name.rawName) }
        httpBody = body
    }
}

extension HTTPRequest {
    /// `request` as an `HTTPRequest`: its method, URL and header fields.
    ///
    /// A `URLRequest` keeps no order among its fields, so they come out sorted by name, the order Courier sends
    /// them in; a field Foundation joined stays one field. The body is not part of an `HTTPRequest`: read it from
    /// `httpBody`.
    ///
    /// - Throws: ``Courier/CourierError/invalidURL(_:)`` when the request has no URL, or one without a scheme or
    ///   host; ``Courier/CourierError/parameterEncodingFailed(reason:underlyingError:)`` when its method is not an
    ///   RFC 9110 token, or, with an ``InvalidHTTPFieldError`` underneath, when a field's name or value is invalid.
    public init(_ request: URLRequest) throws(CourierError) {
        // HTTPRequest(method:url:) stops the process for a URL that URLComponents cannot parse or that has no
        // scheme: refused here instead.
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            components.string != nil, components.scheme != nil, components.host != nil
        else {
            throw CourierError.invalidURL(request.url?.absoluteString ?? "")
        }
        let methodName = request.httpMethod ?? "GET"
        guard let method = HTTPRequest.Method(methodName) else {
            throw CourierError.parameterEncodingFailed(
                reason: "“\(methodName)” is not a valid HTTP method", underlyingError: nil)
        }
        var fields = HTTPFields()
        let sorted = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
        fields.reserveCapacity(sorted.count)
        for (name, value) in sorted {
            fields.append(
                try HTTPField(checking: name, value: value) { invalid in
                    CourierError.parameterEncodingFailed(reason: invalid.description, underlyingError: invalid)
                })
        }
        self.init(method: method, url: url, headerFields: fields)
    }

    /// The request's target as far as it is known, for an error message: `scheme://authority/path`.
    var urlDescription: String {
        "\(scheme.map { $0 + "://" } ?? "")\(authority ?? "")\(path ?? "")"
    }
}
