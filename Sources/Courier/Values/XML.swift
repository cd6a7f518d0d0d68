import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An XML element tree as a Sendable value: what ``XMLParserResponseSerializer`` returns.
///
/// AFNetworking hands out an unparsed `NSXMLParser`; a parser is a non-Sendable, single-use class, and on Linux it
/// reports success for malformed input such as `<foo`, so Courier parses strictly up front and returns the tree.
public struct XML: Sendable, Hashable {
    /// The element's qualified name.
    public var name: String
    /// The element's attributes.
    public var attributes: [String: String]
    /// The child elements, in document order.
    public var children: [XML]
    /// The character data directly inside this element (CDATA included), concatenated.
    public var text: String

    /// Creates an element.
    public init(name: String, attributes: [String: String] = [:], children: [XML] = [], text: String = "") {
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child element named `name`.
    public subscript(name: String) -> XML? {
        children.first { $0.name == name }
    }

    /// Every child element named `name`.
    public func children(named name: String) -> [XML] {
        children.filter { $0.name == name }
    }

    /// Parses a whole document and returns its root element.
    ///
    /// Parsing is strict: unclosed or mismatched tags, content after the root, undefined entities and documents with
    /// no root element all throw, although `XMLParser.parse()` on Linux returns `true` for some of them. On Linux,
    /// documents that declare entities in a DTD are refused, because FoundationXML would drop the entities' text;
    /// the character references and the five predefined entities (`&amp;` …) work everywhere.
    ///
    /// - Throws: ``XMLParsingError``.
    public static func parse(_ data: Data) throws -> XML {
        let parser = XMLParser(data: try XMLParserInput.prepare(data))
        let builder = TreeBuilder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        if let error = builder.error ?? parser.parserError {
            throw XMLParsingError(
                line: parser.lineNumber, column: parser.columnNumber, code: (error as NSError).code)
        }
        guard succeeded, builder.stack.isEmpty, let root = builder.root else {
            throw XMLParsingError(line: parser.lineNumber, column: parser.columnNumber, code: nil)
        }
        return root
    }
}

/// Why a document is not well-formed XML.
public struct XMLParsingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line where the parser stopped.
    public var line: Int
    /// The column where the parser stopped.
    public var column: Int
    /// libxml2's / `XMLParser.ErrorCode`'s code, when the parser gave one.
    public var code: Int?
    /// Why the document was refused before parsing, when it was.
    public var reason: String?

    /// Creates an error.
    public init(line: Int, column: Int, code: Int?, reason: String? = nil) {
        self.line = line
        self.column = column
        self.code = code
        self.reason = reason
    }

    /// E.g. `XML is not well-formed (error 73 at line 1, column 5)`.
    public var description: String {
        if let reason { return "XML is not accepted: \(reason)" }
        let cause = code.map { "error \($0)" } ?? "no complete root element"
        return "XML is not well-formed (\(cause) at line \(line), column \(column))"
    }
}

/// Collects parser events into an `XML` tree. Lives only for one synchronous `parse()` call.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    var stack: [XML] = []
    var root: XML?
    var error: (any Error)?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard root == nil else {
            parser.abortParsing()
            return
        }
        stack.append(XML(name: qualifiedName ?? elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let element = stack.popLast() else { return }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(element)
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].text += String(decoding: block, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if error == nil { error = parseError }
    }
}
