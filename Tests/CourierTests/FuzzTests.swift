import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Random parameter trees and byte strings through every encoder and serializer: nothing may crash or hang, and
/// every failure must be a `CourierError`.
///
/// The tests are `async` and yield between cases: a synchronous test holds one of the cooperative pool's threads
/// (two on a 2-core machine) for its whole run, and these run for seconds, which left the other tests' timers and
/// continuations waiting (measured: 2–7 s late early in the suite).
@Suite(.timeLimit(.minutes(2)), .cpuBound) struct FuzzTests {
    static let iterations = 3000

    @Test func randomParameterTreesThroughRequestSerializers() async throws {
        var random = SeededGenerator(seed: 0xC0FFEE)
        let http = HTTPRequestSerializer()
        let json = JSONRequestSerializer()
        let plist = PropertyListRequestSerializer()
        var jsonFailures = 0
        for _ in 0..<Self.iterations {
            await Task.yield()
            let tree = Self.randomParameter(depth: 0, using: &random)
            let query = QueryString.encode(
                tree, arrayEncoding: [.brackets, .noBrackets, .indexInBrackets].randomElement(using: &random)!)
            #expect(query.utf8.allSatisfy { $0 < 0x80 }, "query strings are ASCII")
            for pair in QueryString.pairs(tree) {
                #expect(pair.value.isLeaf)
            }
            let get = try http.request(method: "GET", urlString: "https://example.com/p?x=1#f", parameters: tree)
            #expect(get.url != nil)
            let post = try http.request(method: "POST", urlString: "https://example.com/p", parameters: tree)
            #expect(post.httpBody == Data(query.utf8) || post.httpBody == Data(QueryString.encode(tree).utf8))
            for serializer in [json as any RequestSerializer, plist] {
                do {
                    let request = try serializer.request(
                        method: "PUT", urlString: "https://example.com/p", parameters: tree)
                    #expect(request.httpBody != nil)
                } catch let error as CourierError {
                    #expect(error.errorCode == -1016)
                    if serializer is JSONRequestSerializer { jsonFailures += 1 }
                }
            }
        }
        #expect(jsonFailures > 0, "the generator produces sets and data, which JSON must refuse")
    }

    @Test func randomStringsThroughPercentEscape() async {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<Self.iterations {
            await Task.yield()
            let string = Self.randomString(using: &random)
            let escaped = QueryString.percentEscape(string)
            #expect(escaped.removingPercentEncoding == string)
            #expect(escaped.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: " ") })
        }
    }

    @Test func randomBytesThroughResponseSerializers() async {
        var random = SeededGenerator(seed: 7)
        let contentTypes = [
            nil, "application/json", "text/xml; charset=utf-8", "application/x-plist", "image/png", "text/plain",
            "TEXT/JSON", "",
        ]
        let serializers: [any ResponseSerializer] = [
            HTTPResponseSerializer(), JSONResponseSerializer(removesKeysWithNullValues: true),
            XMLParserResponseSerializer(), PropertyListResponseSerializer(), ImageResponseSerializer(),
            StringResponseSerializer(), DecodableResponseSerializer<[String: Int]>(),
            CompoundResponseSerializer(serializers: [JSONResponseSerializer(), XMLParserResponseSerializer()]),
        ]
        var outcomes = (successes: 0, failures: 0)
        for _ in 0..<Self.iterations {
            await Task.yield()
            let data = Self.randomBody(using: &random)
            let status = [200, 204, 301, 404, 500, 600, 99].randomElement(using: &random)!
            var headers: [String: String] = [:]
            if let type = contentTypes.randomElement(using: &random)! { headers["Content-Type"] = type }
            let response = HTTPURLResponse(
                url: URL(string: "https://example.com/r")!, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: headers)
            for serializer in serializers {
                do {
                    _ = try serializer.serialize(response: response, data: data)
                    outcomes.successes += 1
                } catch let error as CourierError {
                    #expect([-1011, -1016].contains(error.errorCode))
                    #expect(error.response === response)
                    outcomes.failures += 1
                } catch {
                    Issue.record("not a CourierError: \(error)")
                }
            }
        }
        #expect(outcomes.successes > 0 && outcomes.failures > 0)
    }

    /// XML-shaped input: FoundationXML on Linux crashed on several of these shapes before `XMLParserInput` guarded it.
    @Test func randomXMLThroughTheStrictParser() async throws {
        var random = SeededGenerator(seed: 0x584D4C)
        let pieces = [
            "<", ">", "a", "b", "=", "\"", "'", "/", "&", ";", "é", "中", "😀", "\u{0}", "\u{1}", "\u{FFFE}", " ", "!",
            "-", "?", "[", "]", "x", ":", "<?", "?>", "<!--", "-->", "<![CDATA[", "]]>", "<!DOCTYPE a [",
            "<!ENTITY e \"v\">", "&e;", "&#x41;", "&#0;", "&amp;", "xmlns:p=\"u\"", "p:", "<?xml version=\"1.0\"?>",
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>", "<a>", "</a>", "<b/>", "\u{FEFF}", "<?x?>", "<?<?x?>",
            "<?xmlencodingF?>",
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>", "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>",
        ]
        var parsed = 0
        var refused = 0
        for _ in 0..<Self.iterations * 3 {
            await Task.yield()
            var data = Data(
                (0..<Int.random(in: 0..<40, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
                    .utf8)
            if Bool.random(using: &random) {
                data.append(contentsOf: (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) })
            }
            do {
                _ = try XML.parse(data)
                parsed += 1
            } catch {
                #expect(error is XMLParsingError)
                refused += 1
            }
        }
        #expect(try XML.parse(Data("<a><?x?><b/></a>".utf8)).children.count == 1)
        #expect(parsed > 0, "some random documents are well-formed, so the parser's success path ran")
        #expect(refused > 0)
    }

    // MARK: - Generators

    static func randomParameter(depth: Int, using random: inout SeededGenerator) -> Parameter {
        let leafOnly = depth >= 4
        switch Int.random(in: 0..<(leafOnly ? 7 : 10), using: &random) {
        case 0: return .string(randomString(using: &random))
        case 1: return .int(Int.random(in: Int.min...Int.max, using: &random))
        case 2:
            let special: [Double] = [0, -0.0, 1.5, 1e300, -1e-300, .infinity, .nan, .pi]
            return .double(
                Bool.random(using: &random)
                    ? special.randomElement(using: &random)! : Double.random(in: -1e6...1e6, using: &random))
        case 3: return .bool(Bool.random(using: &random))
        case 4: return .null
        case 5:
            return .data(
                Data((0..<Int.random(in: 0..<8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            )
        case 6: return .string(String(repeating: "漢", count: Int.random(in: 40..<80, using: &random)))
        case 7:
            return .array(
                (0..<Int.random(in: 0..<4, using: &random)).map { _ in randomParameter(depth: depth + 1, using: &random)
                })
        case 8:
            var dictionary: [String: Parameter] = [:]
            for _ in 0..<Int.random(in: 0..<4, using: &random) {
                dictionary[randomString(using: &random)] = randomParameter(depth: depth + 1, using: &random)
            }
            return .dictionary(dictionary)
        default:
            return .set(
                Set((0..<Int.random(in: 0..<4, using: &random)).map { _ in randomParameter(depth: 4, using: &random) }))
        }
    }

    static func randomString(using random: inout SeededGenerator) -> String {
        let alphabet: [Character] = [
            "a", "Z", "0", " ", "&", "=", "[", "]", "%", "+", "?", "/", "#", "é", "中", "😀", "👨‍👩‍👧", "\u{0}", "\n",
            "\u{301}",
        ]
        return String((0..<Int.random(in: 0..<12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
    }

    static func randomBody(using random: inout SeededGenerator) -> Data? {
        let seeds = [
            "", " ", "{\"a\":[1,null,{\"b\":null}]}", "[1,2", "<a><b/></a>", "<a", "<?xml version=\"1.0\"?>",
            "bplist00", "\u{89}PNG\r\n\u{1A}\n", "GIF89a", "\u{FF}\u{D8}\u{FF}", "null", "{\"x\":1}",
        ]
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return nil
        case 1: return Data(seeds.randomElement(using: &random)!.utf8)
        case 2:
            var data = Data(seeds.randomElement(using: &random)!.utf8)
            data.append(
                contentsOf: (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                })
            return data
        default:
            return Data(
                (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }
}
