import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as a property-list body (`AFPropertyListRequestSerializer`).
///
/// GET, HEAD and DELETE put the parameters in the URL's query exactly as ``HTTPRequestSerializer`` does. Other
/// methods get the property list of the parameters (XML by default) as the body, with
/// `Content-Type: application/x-plist` unless the request already has a content type; `nil` parameters leave both
/// alone.
@dynamicMemberLookup
public struct PropertyListRequestSerializer: HTTPRequestSerializerBased {
    /// The serializer supplying headers, request properties and the query-string rules.
    public var http: HTTPRequestSerializer

    /// The output format: `.xml` (the default) or `.binary`; `.openStep` cannot be written.
    public var format: PropertyListSerialization.PropertyListFormat

    /// Creates a serializer.
    public init(
        http: HTTPRequestSerializer = HTTPRequestSerializer(),
        format: PropertyListSerialization.PropertyListFormat = .xml
    ) {
        self.http = http
        self.format = format
    }

    /// The parameters as a property list.
    ///
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` (code -1016) when the tree holds
    ///   something a property list cannot (a null or a set), or the format cannot be written.
    public func encode(_ parameters: Parameter) throws -> Data {
        let isUnrepresentable: (Parameter) -> Bool = {
            switch $0 {
            case .null, .set: return true
            default: return false
            }
        }
        guard format == .xml || format == .binary else {
            throw CourierError.parameterEncodingFailed(
                reason: "The OpenStep property list format cannot be written.", underlyingError: nil)
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        return try parameters.encodedBody(
            refusing: isUnrepresentable, because: "Nulls and sets cannot be written as a property list.",
            reason: Self.invalidParametersReason, with: encoder.encode)
    }

    /// Sets the content type unless present and writes the encoded parameters as the body; `nil` parameters
    /// leave the request unchanged.
    public func encodeBody(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest {
        try request.withBody(encoding: parameters, by: encode, defaultContentType: "application/x-plist")
    }

    static let invalidParametersReason = "The `parameters` argument is not a valid property list."
}
