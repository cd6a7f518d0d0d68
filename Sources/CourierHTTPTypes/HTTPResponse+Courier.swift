import Courier
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPResponse {
    /// The response head Courier received, as an `HTTPResponse`: its status and its header fields in order, each
    /// name as the server wrote it, repeated fields (two `Set-Cookie`) kept as separate fields.
    ///
    /// Prefer this to the `HTTPURLResponse` initializer wherever a ``Courier/ResponseHead`` is at hand
    /// (``Courier/SessionTask/responseHead``): Foundation's response joins repeated fields, which cannot be undone
    /// for `Set-Cookie`, whose values may contain commas.
    ///
    /// - Throws: ``Courier/CourierError/badServerResponse(reason:underlyingError:context:)`` (code -1011) when the
    ///   status is not in 0...999, or, with an ``InvalidHTTPFieldError`` underneath, when a field's name or value is
    ///   invalid. Never traps.
    public init(_ head: ResponseHead) throws(CourierError) {
        let failure = { (reason: String, underlying: (any Error)?) -> CourierError in
            CourierError.badServerResponse(
                reason: reason, underlyingError: underlying, context: CourierError.Context(response: head.response))
        }
        guard (0...999).contains(head.statusCode) else {
            throw failure("the status code \(head.statusCode) is not in 0...999", nil)
        }
        let fields = try HTTPFields.converting(head.headers) { failure($0.description, $0) }
        self.init(status: Status(code: head.statusCode), headerFields: fields)
    }

    /// Foundation's response as an `HTTPResponse`: its status and header fields.
    ///
    /// `HTTPURLResponse` keeps no order and joins repeated fields, on Linux with `, ` under one name: the fields come
    /// out sorted by name, and two `Set-Cookie` as one. Use the ``Courier/ResponseHead`` initializer instead where
    /// you can.
    ///
    /// - Throws: ``Courier/CourierError/badServerResponse(reason:underlyingError:context:)`` as the
    ///   ``Courier/ResponseHead`` initializer does.
    public init(_ response: HTTPURLResponse) throws(CourierError) {
        try self.init(ResponseHead(response))
    }
}

extension ResponseHead {
    /// A Courier response head with `response`'s status and header fields, in order and repeated fields kept, for
    /// the response to a request for `url`; `httpVersion` is the version to report (`HTTPResponse` has none).
    public init(_ response: HTTPResponse, url: URL, httpVersion: String = "HTTP/1.1") {
        self.init(
            statusCode: response.status.code, headers: HTTPHeaderFields(response.headerFields), url: url,
            httpVersion: httpVersion)
    }
}

extension HTTPURLResponse {
    /// Foundation's response with `response`'s status and header fields, for a request for `url`; repeated fields
    /// are joined with `, `, as Courier makes every `HTTPURLResponse` (``Courier/ResponseHead/response``).
    ///
    /// `nil` only when Foundation refuses the response.
    public convenience init?(_ response: HTTPResponse, url: URL) {
        var joined: [(name: HTTPField.Name, value: String)] = []
        joined.reserveCapacity(response.headerFields.count)
        // Names hash (case-insensitively): a peer may send thousands of distinct ones.
        var positions = [HTTPField.Name: Int](minimumCapacity: response.headerFields.count)
        for field in response.headerFields {
            if let index = positions[field.name] {
                joined[index].value += ", " + field.value
            } else {
                positions[field.name] = joined.count
                joined.append((field.name, field.value))
            }
        }
        var fields: [String: String] = Dictionary(minimumCapacity: joined.count)
        for (name, value) in joined { fields[name.rawName] = value }
        self.init(url: url, statusCode: response.status.code, httpVersion: "HTTP/1.1", headerFields: fields)
    }
}
