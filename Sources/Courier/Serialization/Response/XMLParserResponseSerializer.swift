import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and parses its body as an ``XML`` element tree (`AFXMLParserResponseSerializer`).
///
/// Parsing is strict (see ``XML/parse(_:)``): malformed XML is an error with code -1016 and the parser's error
/// underneath. An empty body gives `nil`.
public struct XMLParserResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `application/xml`, `text/xml`.
    public var acceptableContentTypes: Set<String>?

    /// The MIME types XML is served as.
    public static let xmlContentTypes: Set<String> = ["application/xml", "text/xml"]

    /// Creates a serializer.
    public init(
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = xmlContentTypes
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> XML? {
        try validateAndParse(head: head, data: data, failureReason: unreadableDataReason, parse: XML.parse)
    }
}

extension XMLParserResponseSerializer: HeadSerializing {}
