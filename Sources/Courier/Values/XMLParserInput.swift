import Foundation

/// Checks and adjusts a document before `XMLParser` sees it, so that FoundationXML's Linux bugs can neither crash
/// the process nor silently drop content.
///
/// - Names that are not valid UTF-8 make FoundationXML trap; libxml2 passes them through when it recovers from a
///   broken document, and it ignores declarations it cannot read (`<?xml encoding="UTF-16"?>` on UTF-8 bytes). So
///   Courier decodes the document itself (byte-order mark, else the declared encoding, else UTF-8), refuses bytes
///   that are not valid in that encoding, and hands libxml2 UTF-8 with the declaration saying so.
/// - A processing instruction without data (`<?x?>`) reaches FoundationXML as a NULL pointer that it passes to
///   `strlen`. A space is added after the target (`<?x ?>`), which XML 1.0 §2.6 says changes nothing (see
///   ``guardingEmptyProcessingInstructions(_:)`` for the one visible effect).
/// - Internal entities declared in a DTD (`<!ENTITY e "text">`) are expanded to nothing by FoundationXML on Linux,
///   so their text would vanish without an error. Such documents are refused there.
enum XMLParserInput {
    /// libxml2's `XML_ERR_INVALID_CHAR`.
    static let invalidCharacterCode = 9

    /// The bytes to parse.
    ///
    /// - Throws: ``XMLParsingError`` for a document that cannot be parsed safely and faithfully.
    static func prepare(_ data: Data) throws -> Data {
        let bytes = Array(try utf8Document(data).utf8)
        if !entitiesAreExpanded, declaresEntities(bytes) {
            throw XMLParsingError(
                line: 1, column: 1, code: nil,
                reason:
                    "documents that declare entities are not supported: FoundationXML on this platform drops their text"
            )
        }
        return Data(guardingEmptyProcessingInstructions(bytes) ?? bytes)
    }

    /// The document as text, decoded by its byte-order mark, else its declared encoding, else as UTF-8, with the
    /// declaration's encoding rewritten to `UTF-8` and no byte-order mark.
    ///
    /// - Throws: ``XMLParsingError`` for an unknown encoding or bytes that are not valid in the encoding.
    static func utf8Document(_ data: Data) throws -> String {
        let marks: [(bytes: [UInt8], encoding: String.Encoding)] = [
            ([0xEF, 0xBB, 0xBF], .utf8), ([0x00, 0x00, 0xFE, 0xFF], .utf32BigEndian),
            ([0xFF, 0xFE, 0x00, 0x00], .utf32LittleEndian), ([0xFE, 0xFF], .utf16BigEndian),
            ([0xFF, 0xFE], .utf16LittleEndian),
        ]
        var body = data
        var encoding = String.Encoding.utf8
        if let mark = marks.first(where: { data.starts(with: $0.bytes) }) {
            body = data.dropFirst(mark.bytes.count)
            encoding = mark.encoding
        } else if let declared = declaredEncodingName(data) {
            guard let known = String.Encoding(ianaCharsetName: declared) else {
                throw XMLParsingError(
                    line: 1, column: 1, code: nil, reason: "the encoding “\(declared)” is not supported")
            }
            encoding = known
        }
        let decoded: String?
        if encoding == .utf8 {
            decoded = isValidUTF8(body) ? String(decoding: body, as: UTF8.self) : nil
        } else {
            decoded = String(data: Data(body), encoding: encoding)
        }
        guard let text = decoded else {
            throw XMLParsingError(
                line: 1, column: 1, code: invalidCharacterCode, reason: "the data is not valid \(encoding) text")
        }
        return rewritingDeclaredEncoding(of: text)
    }

    /// The `encoding` pseudo-attribute of an XML declaration at the very start of ASCII-compatible bytes.
    static func declaredEncodingName(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(200), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>") else { return nil }
        return encodingAttribute(in: head[..<end.lowerBound])?.value
    }

    private static func rewritingDeclaredEncoding(of text: String) -> String {
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>"),
            let attribute = encodingAttribute(in: text[..<end.lowerBound])
        else { return text }
        return text.replacingCharacters(in: attribute.valueRange, with: "UTF-8")
    }

    /// The value of `encoding = "…"` (or `'…'`) in a declaration, and where the value is.
    private static func encodingAttribute(in declaration: Substring) -> (
        value: String, valueRange: Range<String.Index>
    )? {
        guard let key = declaration.range(of: "encoding") else { return nil }
        var index = key.upperBound
        func skipSpaces() {
            while index < declaration.endIndex, declaration[index].isWhitespace {
                index = declaration.index(after: index)
            }
        }
        skipSpaces()
        guard index < declaration.endIndex, declaration[index] == "=" else { return nil }
        index = declaration.index(after: index)
        skipSpaces()
        guard index < declaration.endIndex, declaration[index] == "\"" || declaration[index] == "'" else { return nil }
        let quote = declaration[index]
        let valueStart = declaration.index(after: index)
        guard let valueEnd = declaration[valueStart...].firstIndex(of: quote) else { return nil }
        return (String(declaration[valueStart..<valueEnd]), valueStart..<valueEnd)
    }

    /// Whether `<!ENTITY` appears outside comments and CDATA sections.
    static func declaresEntities(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            if bytes.starts("<!--", at: index) {
                index = bytes.index(after: "-->", from: index + 4)
            } else if bytes.starts("<![CDATA[", at: index) {
                index = bytes.index(after: "]]>", from: index + 9)
            } else if bytes.starts("<!ENTITY", at: index) {
                return true
            } else {
                index += 1
            }
        }
        return false
    }

    /// The bytes with a space after every `<?target` directly followed by `?>`, or `nil` when there is none.
    ///
    /// This deliberately ignores comments and CDATA sections: in a broken document libxml2's recovery may not see
    /// them where a scanner would (`<a<!--<?x?>` crashed). Inside a CDATA section the space is visible, a harmless
    /// change to text that cannot otherwise be parsed safely.
    static func guardingEmptyProcessingInstructions(_ bytes: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes.starts("<?", at: index) else {
                index += 1
                continue
            }
            var end = index + 2
            while end < bytes.count, ![UInt8(ascii: "?"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[end]) { end += 1 }
            if end > index + 2, bytes.starts("?>", at: end) {
                output.append(contentsOf: bytes[copied..<end])
                output.append(0x20)
                copied = end
                index = end
            } else {
                // Rescan from the next byte: `<?<?x?>` hides an instruction inside a broken one.
                index += 1
            }
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    /// Whether `XMLParser` reports the text of internal entities (Apple's does; FoundationXML's does not).
    private static var entitiesAreExpanded: Bool {
        #if canImport(Darwin)
            return true
        #else
            return false
        #endif
    }

    static func isValidUTF8(_ data: Data) -> Bool {
        var decoder = UTF8()
        var bytes = data.makeIterator()
        while true {
            switch decoder.decode(&bytes) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

extension [UInt8] {
    fileprivate func starts(_ prefix: String, at position: Int) -> Bool {
        var position = position
        for byte in prefix.utf8 {
            guard position < count, self[position] == byte else { return false }
            position += 1
        }
        return true
    }

    /// The index just past the first `terminator` at or after `start`, or `count` when there is none.
    fileprivate func index(after terminator: String, from start: Int) -> Int {
        var index = start
        while index < count, !starts(terminator, at: index) { index += 1 }
        return Swift.min(index + terminator.utf8.count, count)
    }
}
