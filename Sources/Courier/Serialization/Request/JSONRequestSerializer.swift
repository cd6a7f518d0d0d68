import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as a JSON body (`AFJSONRequestSerializer`).
///
/// GET, HEAD and DELETE put the parameters in the URL's query exactly as ``HTTPRequestSerializer`` does. Other
/// methods get the JSON of the parameters as the body, with `Content-Type: application/json` unless the request
/// already has a content type; `nil` parameters leave both body and content type alone.
@dynamicMemberLookup
public struct JSONRequestSerializer: HTTPRequestSerializerBased {
    /// The serializer supplying headers, request properties and the query-string rules.
    public var http: HTTPRequestSerializer

    /// JSON output options (`.sortedKeys`, `.prettyPrinted`, `.withoutEscapingSlashes`…); default none, like
    /// AFNetworking's `writingOptions` of 0.
    public var outputFormatting: JSONEncoder.OutputFormatting

    /// Creates a serializer.
    public init(
        http: HTTPRequestSerializer = HTTPRequestSerializer(), outputFormatting: JSONEncoder.OutputFormatting = []
    ) {
        self.http = http
        self.outputFormatting = outputFormatting
    }

    /// The parameters as JSON.
    ///
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` (code -1016) when the tree holds
    ///   something JSON cannot: a set, raw data, or a non-finite number.
    public func encode(_ parameters: Parameter) throws -> Data {
        let isUnrepresentable: (Parameter) -> Bool = {
            switch $0 {
            case .set, .data: return true
            case .double(let value): return !value.isFinite
            default: return false
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = outputFormatting
        return try parameters.encodedBody(
            refusing: isUnrepresentable, because: "Sets, raw data and non-finite numbers cannot be written as JSON.",
            reason: Self.invalidParametersReason, with: encoder.encode)
    }

    /// Sets the content type unless present and writes the encoded parameters as the body; `nil` parameters
    /// leave the request unchanged.
    public func encodeBody(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest {
        try request.withBody(encoding: parameters, by: encode, defaultContentType: "application/json")
    }

    static let invalidParametersReason = "The `parameters` argument is not valid JSON."
}
