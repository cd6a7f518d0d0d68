#if canImport(FoundationXML) || os(macOS)
    import Foundation

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif
    #if canImport(FoundationXML)
        import FoundationXML
    #endif

    /// Validates the response and checks that its body is a well-formed XML document
    /// (`AFXMLDocumentResponseSerializer`; macOS and Linux, where `XMLDocument` exists).
    ///
    /// `XMLDocument` is a mutable class that is not Sendable, so the serializer returns a ``WellFormedXMLDocument``
    /// from which each thread makes its own document. The body is checked with the strict parser first: on Linux
    /// `XMLDocument` silently repairs `<foo` and crashes on an empty body.
    public struct XMLDocumentResponseSerializer: ResponseValidating {
        /// The acceptable status codes; default 200–299.
        public var acceptableStatusCodes: IndexSet?
        /// The acceptable MIME types; default `application/xml`, `text/xml`.
        public var acceptableContentTypes: Set<String>?
        /// The options documents are made with.
        public var options: XMLNode.Options

        /// Creates a serializer.
        public init(
            options: XMLNode.Options = [],
            acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
            acceptableContentTypes: Set<String>? = XMLParserResponseSerializer.xmlContentTypes
        ) {
            self.options = options
            self.acceptableStatusCodes = acceptableStatusCodes
            self.acceptableContentTypes = acceptableContentTypes
        }

        /// Validates the response and the document's well-formedness.
        ///
        /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
        public func serialize(head: ResponseHead?, data: Data?) throws -> WellFormedXMLDocument? {
            try validateAndParse(head: head, data: data, failureReason: unreadableDataReason) { data in
                _ = try XML.parse(data)
                _ = try XMLDocument(data: data, options: options)
                return WellFormedXMLDocument(data: data, options: options)
            }
        }
    }

    /// The bytes of an XML document known to be well-formed.
    public struct WellFormedXMLDocument: Sendable {
        /// The document's bytes.
        public let data: Data
        /// The options ``makeDocument()`` uses.
        public let options: XMLNode.Options

        /// A new `XMLDocument` for the caller's own use.
        public func makeDocument() throws -> XMLDocument {
            try XMLDocument(data: data, options: options)
        }
    }
    extension XMLDocumentResponseSerializer: HeadSerializing {}
#endif
