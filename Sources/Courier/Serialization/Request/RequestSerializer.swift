import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a request and its parameters into the request that goes on the wire (`AFURLRequestSerialization`).
///
/// Serializers are values: configure a copy, hand it to a session manager, and it can be used from any thread.
public protocol RequestSerializer: Sendable {
    /// Returns a copy of `request` with the serializer's default headers added (where the request has none of
    /// that name) and `parameters` encoded into its URL or body.
    ///
    /// - Throws: ``CourierError`` when the parameters cannot be encoded.
    func serialize(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest

    /// Builds a request for `method` and `urlString`, applies the serializer's request properties, then serializes
    /// `parameters` into it.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` (code -1000) for a string that is not an absolute URL, or what
    ///   ``serialize(_:parameters:)`` throws.
    func request(method: String, urlString: String, parameters: Parameter?) throws -> URLRequest

    /// Builds a request for an already parsed `url`; the same as the `urlString` form without parsing it again.
    func request(method: String, url: URL, parameters: Parameter?) throws -> URLRequest

    /// The serializer whose requests this one's are, exactly, for the methods that put their parameters in the URL
    /// (``HTTPRequestSerializer/methodsEncodingParametersInURI``): for those, a session sends such a request without
    /// making a `URLRequest` at all. `nil` (the default) when there is none, as for a serializer of your own.
    var baseSerializer: HTTPRequestSerializer? { get }
}

extension RequestSerializer {
    /// None: every request is made with ``request(method:url:parameters:)``.
    public var baseSerializer: HTTPRequestSerializer? { nil }

    /// Parses nothing itself: passes the URL's string to ``request(method:urlString:parameters:)``.
    public func request(method: String, url: URL, parameters: Parameter?) throws -> URLRequest {
        try request(method: method, urlString: url.absoluteString, parameters: parameters)
    }
}
