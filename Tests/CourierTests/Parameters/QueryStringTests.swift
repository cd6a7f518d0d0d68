import Foundation
import Testing

@testable import Courier

@Suite struct QueryStringTests {
    @Test func percentEscapesReservedCharactersButKeepsSlashAndQuestionMark() {
        #expect(QueryString.percentEscape(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
    }

    @Test func percentEscapeKeepsUnreservedCharacters() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?"
        #expect(QueryString.percentEscape(unreserved) == unreserved)
    }

    @Test func percentEscapeWritesSpaceAsPercent20AndEscapesPercent() {
        #expect(QueryString.percentEscape("a b+c") == "a%20b%2Bc")
        #expect(QueryString.percentEscape("100%") == "100%25")
        #expect(QueryString.percentEscape("%20") == "%2520")
    }

    @Test func percentEscapeUsesUpperCaseUTF8Hex() {
        #expect(QueryString.percentEscape("é") == "%C3%A9")
        #expect(QueryString.percentEscape("\n\t") == "%0A%09")
        #expect(QueryString.percentEscape("\u{0}") == "%00")
    }

    @Test func percentEscapeKeepsEmojiSequencesWhole() {
        // A family emoji is one grapheme of seven scalars; every byte must be escaped, none lost or split.
        let family = "👨‍👩‍👧‍👦"
        let escaped = QueryString.percentEscape(family)
        #expect(escaped.removingPercentEncoding == family)
        #expect(escaped == family.utf8.map { String(format: "%%%02X", $0) }.joined())
    }

    @Test func percentEscapeHandlesLongCJKStrings() {
        // AF #2958: long CJK strings crashed AFNetworking's batched escaping.
        let cjk = String(repeating: "中文字符串测试🀄️", count: 40)
        #expect(cjk.count > 50)
        let escaped = QueryString.percentEscape(cjk)
        #expect(escaped.removingPercentEncoding == cjk)
        #expect(escaped.allSatisfy { $0.isASCII })
    }

    @Test func percentEscapeOfEmptyStringIsEmpty() {
        #expect(QueryString.percentEscape("") == "")
    }

    @Test func encodesAFNetworkingExamples() {
        #expect(QueryString.encode(["key": "value", "key1": "value&"]) == "key=value&key1=value%26")
        #expect(QueryString.encode(["test": ["value1", "value2"]]) == "test%5B%5D=value1&test%5B%5D=value2")
    }

    @Test func sortsKeysByCodePoint() {
        let parameters: Parameter = ["b": 1, "B": 2, "a": 3, "10": 4, "9": 5, "_": 6, "é": 7]
        // Code points: "1" (0x31) < "9" < "B" (0x42) < "_" (0x5F) < "a" < "b" < "é" (0xE9).
        #expect(QueryString.encode(parameters) == "10=4&9=5&B=2&_=6&a=3&b=1&%C3%A9=7")
    }

    @Test func sortsByCodePointNotByUTF16() {
        // U+1F600 is a surrogate pair in UTF-16 (0xD83D…) which would sort before U+FF5E; by code point it is after.
        let parameters: Parameter = ["😀": 1, "～": 2]
        #expect(QueryString.pairs(parameters).map(\.field) == ["～", "😀"])
    }

    @Test func nestsDictionariesAsParentChild() {
        let parameters: Parameter = ["user": ["name": "bang", "phone": ["mobile": "xx"]]]
        #expect(QueryString.encode(parameters) == "user%5Bname%5D=bang&user%5Bphone%5D%5Bmobile%5D=xx")
        #expect(QueryString.pairs(parameters).map(\.field) == ["user[name]", "user[phone][mobile]"])
    }

    @Test func nestsArraysOfArraysAndDictionaries() {
        let parameters: Parameter = ["a": [["x", "y"], ["k": "v", "j": 1]]]
        #expect(QueryString.pairs(parameters).map(\.field) == ["a[][]", "a[][]", "a[][j]", "a[][k]"])
        #expect(QueryString.encode(parameters) == "a%5B%5D%5B%5D=x&a%5B%5D%5B%5D=y&a%5B%5D%5Bj%5D=1&a%5B%5D%5Bk%5D=v")
    }

    @Test func keepsArrayOrder() {
        #expect(QueryString.encode(["k": ["z", "a", "m"]]) == "k%5B%5D=z&k%5B%5D=a&k%5B%5D=m")
    }

    @Test func setsAreSortedUnderTheSameKeyWithoutBrackets() {
        let parameters: Parameter = ["s": .set(["b", "a", "c"])]
        #expect(QueryString.encode(parameters) == "s=a&s=b&s=c")
    }

    @Test func setsSortByStringFormAcrossTypes() {
        let parameters: Parameter = ["s": .set([10, 9, "8", true])]
        // String forms "10", "9", "8", "1" sort as "1" < "10" < "8" < "9".
        #expect(QueryString.encode(parameters) == "s=1&s=10&s=8&s=9")
    }

    @Test func emptyContainersEmitNothing() {
        #expect(QueryString.encode(["a": [], "b": [:], "c": .set([])]) == "")
        #expect(QueryString.encode(["a": [], "b": "x"]) == "b=x")
        #expect(QueryString.encode([:]) == "")
    }

    @Test func nullEmitsTheFieldAlone() {
        #expect(QueryString.encode(["a": nil, "b": "1"]) == "a&b=1")
        #expect(QueryString.encode(["list": [nil, "x"]]) == "list%5B%5D&list%5B%5D=x")
    }

    @Test func rendersLeaves() {
        let parameters: Parameter = [
            "t": true, "f": false, "i": 42, "n": -7, "d": 1.5, "w": 2.0, "e": 1e-5, "big": 1e20,
            "data": .data(Data("héllo".utf8)), "s": "x y",
        ]
        #expect(
            QueryString.encode(parameters)
                == "big=1e%2B20&d=1.5&data=h%C3%A9llo&e=1e-05&f=0&i=42&n=-7&s=x%20y&t=1&w=2")
    }

    @Test func rendersDoublesInShortestRoundTripForm() {
        #expect(Parameter.double(0.1).leafString() == "0.1")
        #expect(Parameter.double(1.0 / 3.0).leafString() == "0.3333333333333333")
        #expect(Parameter.double(-0.0).leafString() == "0")
        #expect(Parameter.double(.infinity).leafString() == "inf")
        #expect(Parameter.double(.nan).leafString() == "nan")
    }

    @Test func boolEncodingLiteral() {
        #expect(QueryString.encode(["a": true, "b": false], boolEncoding: .literal) == "a=true&b=false")
        #expect(QueryString.encode(["a": true, "b": false], boolEncoding: .numeric) == "a=1&b=0")
    }

    @Test func arrayEncodingOptions() {
        let parameters: Parameter = ["k": ["a", "b"], "n": [["x": 1]]]
        #expect(QueryString.encode(parameters, arrayEncoding: .brackets) == "k%5B%5D=a&k%5B%5D=b&n%5B%5D%5Bx%5D=1")
        #expect(QueryString.encode(parameters, arrayEncoding: .noBrackets) == "k=a&k=b&n%5Bx%5D=1")
        #expect(
            QueryString.encode(parameters, arrayEncoding: .indexInBrackets) == "k%5B0%5D=a&k%5B1%5D=b&n%5B0%5D%5Bx%5D=1"
        )
    }

    @Test func nonDictionaryRoots() {
        #expect(QueryString.encode("token") == "token")
        #expect(QueryString.encode(["a b", ["k": "v"]]) == "a%20b&k=v")
        #expect(QueryString.encode(nil) == "")
        #expect(QueryString.encode(.set([2, 1])) == "1&2")
    }

    @Test func escapesKeysAndValues() {
        #expect(QueryString.encode(["a&b": "c=d"]) == "a%26b=c%3Dd")
        #expect(QueryString.encode(["path": "/a/b?c"]) == "path=/a/b?c")
    }

    @Test func pairsKeepUnescapedFieldsAndLeafValues() {
        let pairs = QueryString.pairs(["d": ["x": .data(Data([0xFF]))], "n": nil])
        #expect(pairs == [.init(field: "d[x]", value: .data(Data([0xFF]))), .init(field: "n", value: .null)])
    }
}
