import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct StringResponseSerializerTests {
    private typealias F = ResponseFixtures

    /// `café` in ISO-8859-1.
    private static let latin1Cafe = Data([0x63, 0x61, 0x66, 0xE9])

    @Test func defaults() {
        let serializer = StringResponseSerializer()
        #expect(serializer.encoding == nil)
        #expect(serializer.acceptableContentTypes == nil)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
    }

    @Test func decodesUTF8ByDefault() throws {
        let text = "héllo wörld 😀 中文"
        #expect(
            try StringResponseSerializer().serialize(
                response: F.response(contentType: "text/plain"), data: F.data(text)) == text)
        #expect(try StringResponseSerializer().serialize(response: F.response(), data: F.data(text)) == text)
        #expect(try StringResponseSerializer().serialize(response: nil, data: F.data(text)) == text)
    }

    @Test(arguments: [
        "text/plain; charset=iso-8859-1", "text/plain; charset=ISO-8859-1", "text/html;charset=\"latin1\"",
    ])
    func decodesLatin1FromCharset(contentType: String) throws {
        let text = try StringResponseSerializer().serialize(
            response: F.response(contentType: contentType), data: Self.latin1Cafe)
        #expect(text == "café")
    }

    @Test func latin1BytesAreInvalidUTF8WithoutCharset() throws {
        let error = try #require(throws: CourierError.self) {
            try StringResponseSerializer().serialize(
                response: F.response(contentType: "text/plain"), data: Self.latin1Cafe)
        }
        guard case .responseSerializationFailed(_, let context, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(context.data == Self.latin1Cafe)
        #expect(underlying as? TextDecodingError == TextDecodingError(encoding: .utf8))
    }

    @Test(arguments: [[0xFF, 0xFE, 0x41], [0xC3], [0x41, 0x80, 0x42], [0xED, 0xA0, 0x80]] as [[UInt8]])
    func invalidUTF8IsAnError(bytes: [UInt8]) throws {
        let error = try #require(throws: CourierError.self) {
            try StringResponseSerializer().serialize(
                response: F.response(contentType: "text/plain; charset=utf-8"), data: Data(bytes))
        }
        #expect(error.errorCode == -1016)
        #expect(error.underlyingError is TextDecodingError)
    }

    @Test func decodesUTF16WithByteOrderMark() throws {
        let data = try #require("héllo 😀".data(using: .utf16))
        let text = try StringResponseSerializer().serialize(
            response: F.response(contentType: "text/plain; charset=utf-16"), data: data)
        #expect(text == "héllo 😀")
    }

    @Test func decodesUTF16LittleAndBigEndian() throws {
        let little = Data([0x68, 0x00, 0xE9, 0x00])
        let big = Data([0x00, 0x68, 0x00, 0xE9])
        #expect(
            try StringResponseSerializer().serialize(
                response: F.response(contentType: "text/plain; charset=UTF-16LE"), data: little) == "hé")
        #expect(
            try StringResponseSerializer().serialize(
                response: F.response(contentType: "text/plain; charset=utf-16be"), data: big) == "hé")
    }

    @Test func decodesWindows1252() throws {
        let text = try StringResponseSerializer()
            .serialize(
                response: F.response(contentType: "text/plain; charset=windows-1252"), data: Data([0x80, 0x20, 0x35]))
        #expect(text == "€ 5")
    }

    @Test func explicitEncodingOverridesCharset() throws {
        let serializer = StringResponseSerializer(encoding: .isoLatin1)
        #expect(
            try serializer.serialize(
                response: F.response(contentType: "text/plain; charset=utf-8"), data: Self.latin1Cafe) == "café")
        #expect(try serializer.serialize(response: nil, data: Self.latin1Cafe) == "café")

        let utf8 = StringResponseSerializer(encoding: .utf8)
        #expect(throws: CourierError.self) {
            try utf8.serialize(
                response: F.response(contentType: "text/plain; charset=iso-8859-1"), data: Self.latin1Cafe)
        }
    }

    @Test func unknownCharsetFallsBackToUTF8() throws {
        let text = try StringResponseSerializer()
            .serialize(response: F.response(contentType: "text/plain; charset=x-unknown"), data: F.data("naïve"))
        #expect(text == "naïve")
    }

    @Test func emptyBodyIsEmptyString() throws {
        let serializer = StringResponseSerializer()
        #expect(try serializer.serialize(response: F.response(), data: Data()) == "")
        #expect(try serializer.serialize(response: F.response(), data: nil) == "")
        #expect(try serializer.serialize(response: nil, data: nil) == "")
    }

    @Test func singleSpaceIsKeptAsText() throws {
        #expect(
            try StringResponseSerializer().serialize(response: F.response(contentType: "text/plain"), data: F.data(" "))
                == " ")
    }

    @Test func statusErrorCarriesTheText() throws {
        let data = F.data("Not here")
        let error = try #require(throws: CourierError.self) {
            try StringResponseSerializer().serialize(response: F.response(404, contentType: "text/plain"), data: data)
        }
        #expect(error.errorCode == -1011)
        #expect(error.errorDescription == "Request failed: not found (404)")
        #expect(error.serializedObject as? String == "Not here")
        #expect(error.responseData == data)
    }

    @Test func statusErrorWithEmptyBodyThrows() throws {
        let error = try #require(throws: CourierError.self) {
            try StringResponseSerializer().serialize(response: F.response(503), data: nil)
        }
        #expect(error.errorCode == -1011)
    }

    @Test func acceptableContentTypesAreEnforced() throws {
        let serializer = StringResponseSerializer(acceptableContentTypes: ["text/plain"])
        #expect(
            try serializer.serialize(response: F.response(contentType: "Text/Plain; charset=utf-8"), data: F.data("ok"))
                == "ok")
        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(response: F.response(contentType: "text/html"), data: F.data("<b>"))
        }
        guard case .unacceptableContentType("text/html", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(try serializer.serialize(response: F.response(contentType: "text/html"), data: nil) == "")
    }

    @Test(arguments: [
        ("utf-8", String.Encoding.utf8), ("UTF8", .utf8), ("us-ascii", .ascii), ("ISO-8859-1", .isoLatin1),
        ("latin1", .isoLatin1), ("iso-8859-2", .isoLatin2), ("utf-16", .utf16), ("utf-16le", .utf16LittleEndian),
        ("UTF-16BE", .utf16BigEndian), ("utf-32", .utf32), ("windows-1252", .windowsCP1252),
        ("Shift_JIS", .shiftJIS), ("euc-jp", .japaneseEUC), ("macintosh", .macOSRoman),
    ])
    func charsetNames(charset: String, encoding: String.Encoding) {
        #expect(StringResponseSerializer.encoding(forCharset: charset) == encoding)
    }

    @Test func unknownCharsetNameHasNoEncoding() {
        #expect(StringResponseSerializer.encoding(forCharset: "koi8-r") == nil)
        #expect(StringResponseSerializer.encoding(forCharset: "") == nil)
    }

    @Test func textDecodingErrorDescription() {
        let error = TextDecodingError(encoding: .utf8)
        #expect(error.description.hasPrefix("The data is not valid "))
        #expect(error.description.hasSuffix(" text."))
        #expect(error == TextDecodingError(encoding: .utf8))
        #expect(error != TextDecodingError(encoding: .isoLatin1))
    }
}
