import Foundation
import Testing

@testable import Courier

// MARK: - Fixtures

private struct Flat: Encodable {
    var name: String
    var age: Int
    var score: Double
    var active: Bool
}

private struct Phone: Encodable {
    var mobile: String
    var home: String?
}

private struct Person: Encodable {
    var name: String
    var phone: Phone
}

private struct Team: Encodable {
    var title: String
    var members: [Person]
}

private struct WithOptionals: Encodable {
    var required: String
    var nickname: String?
    var age: Int?
}

private enum Color: String, Encodable {
    case red
    case darkBlue = "dark-blue"
}

private struct Palette: Encodable {
    var primary: Color
    var others: [Color]
}

private struct Integers: Encodable {
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
}

private struct Big: Encodable {
    var big: UInt64
}

private struct Floats: Encodable {
    var float: Float
    var double: Double
}

private struct Stamped: Encodable {
    var at: Date
}

private struct Blob: Encodable {
    var bytes: Data
}

private struct Link: Encodable {
    var url: URL
}

private struct Price: Encodable {
    var amount: Decimal
}

private struct CamelCase: Encodable {
    var firstName: String
    var userID: Int
    var myURLValue: String
    var alreadySnake: Bool
    var address1Line: String
    var nested: Inner

    enum CodingKeys: String, CodingKey {
        case firstName, userID, myURLValue, address1Line, nested
        case alreadySnake = "already_snake"
    }

    struct Inner: Encodable {
        var postCode: String
    }
}

/// Writes through nested keyed and unkeyed containers and every kind of super encoder.
private struct Custom: Encodable {
    enum Keys: String, CodingKey {
        case id, info, list, base, extra
    }
    enum InfoKeys: String, CodingKey {
        case label, coordinates
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(7, forKey: .id)

        var info = container.nestedContainer(keyedBy: InfoKeys.self, forKey: .info)
        try info.encode("here", forKey: .label)
        var coordinates = info.nestedUnkeyedContainer(forKey: .coordinates)
        try coordinates.encode(1.5)
        try coordinates.encode(-2.5)

        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode("first")
        var element = list.nestedContainer(keyedBy: InfoKeys.self)
        try element.encode("second", forKey: .label)
        var inner = list.nestedUnkeyedContainer()
        try inner.encode(true)
        try inner.encodeNil()
        var elementSuper = list.superEncoder().singleValueContainer()
        try elementSuper.encode("fourth")

        var superContainer = container.superEncoder().container(keyedBy: InfoKeys.self)
        try superContainer.encode("from super", forKey: .label)

        var base = container.superEncoder(forKey: .base).singleValueContainer()
        try base.encode(42)

        try container.encodeNil(forKey: .extra)
    }
}

private class Animal: Encodable {
    var name: String

    init(name: String) {
        self.name = name
    }
}

/// Puts its superclass under `super`, as `JSONEncoder` users do.
private final class Dog: Animal {
    var breed: String

    enum CodingKeys: String, CodingKey {
        case breed
    }

    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

/// Shares its encoder with its superclass, so both write into the same dictionary.
private final class Cat: Animal {
    var lives: Int

    enum CodingKeys: String, CodingKey {
        case lives
    }

    init(name: String, lives: Int) {
        self.lives = lives
        super.init(name: name)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
        try super.encode(to: encoder)
    }
}

private enum Boom: Error, Equatable {
    case failed(Int)
}

private struct Throwing: Encodable {
    var code: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode("partial", forKey: AnyCodingKey("before"))
        throw Boom.failed(code)
    }
}

private struct HoldsThrowing: Encodable {
    var items: [Throwing]
}

/// Writes the coding path it was encoded at.
private struct PathReporter: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoder.codingPath.map(\.stringValue).joined(separator: "/"))
    }
}

private struct PathHolder: Encodable {
    var here: PathReporter
    var list: [PathReporter]
    var map: [String: PathReporter]
}

private struct Silent: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

private struct EmptyModel: Encodable {}

private struct Twice: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode("first", forKey: AnyCodingKey("key"))
        try container.encode("second", forKey: AnyCodingKey("key"))
        try container.encode(1, forKey: AnyCodingKey("shape"))
        var nested = container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey("shape"))
        try nested.encode(true, forKey: AnyCodingKey("now"))
    }
}

/// Asks for two kinds of container from one encoder: the last one written wins, nothing traps.
private struct Fickle: Encodable {
    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: AnyCodingKey.self)
        try keyed.encode(1, forKey: AnyCodingKey("a"))
        var single = encoder.singleValueContainer()
        try single.encode("single")
        var unkeyed = encoder.unkeyedContainer()
        try unkeyed.encode(2)
    }
}

private struct UserInfoReader: Encodable {
    static let key = CodingUserInfoKey(rawValue: "courier.test")

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        let value = Self.key.flatMap { encoder.userInfo[$0] as? String }
        try container.encode(value ?? "missing")
    }
}

private struct WithParameter: Encodable {
    var name: String
    var raw: Parameter
}

private struct Query: Encodable {
    var name: String
    var phone: Phone
    var tags: [String]
    var n: Int
    var active: Bool
    var ratio: Double
    var note: String?
}

// MARK: - Tests

@Suite("ParameterEncoder")
struct ParameterEncoderTests {
    @Test func flatStruct() throws {
        let parameter = try Parameter(encoding: Flat(name: "bang", age: 30, score: 9.5, active: true))
        #expect(parameter == ["name": "bang", "age": 30, "score": 9.5, "active": true])
    }

    @Test func nestedStructs() throws {
        let person = Person(name: "bang", phone: Phone(mobile: "xx", home: "yy"))
        let parameter = try Parameter(encoding: person)
        #expect(parameter == ["name": "bang", "phone": ["mobile": "xx", "home": "yy"]])
    }

    @Test func arraysOfStructs() throws {
        let team = Team(
            title: "core",
            members: [
                Person(name: "a", phone: Phone(mobile: "1", home: nil)),
                Person(name: "b", phone: Phone(mobile: "2", home: "3")),
            ]
        )
        let parameter = try Parameter(encoding: team)
        #expect(
            parameter == [
                "title": "core",
                "members": [
                    ["name": "a", "phone": ["mobile": "1"]],
                    ["name": "b", "phone": ["mobile": "2", "home": "3"]],
                ],
            ]
        )
    }

    @Test func nilOptionalsAreOmittedAndPresentOnesKept() throws {
        let absent = try Parameter(encoding: WithOptionals(required: "r", nickname: nil, age: nil))
        #expect(absent == ["required": "r"])

        let present = try Parameter(encoding: WithOptionals(required: "r", nickname: "n", age: 3))
        #expect(present == ["required": "r", "nickname": "n", "age": 3])
    }

    @Test func explicitNilIsNull() throws {
        #expect(try Parameter(encoding: [1, nil, 3] as [Int?]) == [1, nil, 3])
        #expect(try Parameter(encoding: Int?.none) == .null)
    }

    @Test func stringRawValueEnums() throws {
        let parameter = try Parameter(encoding: Palette(primary: .darkBlue, others: [.red, .darkBlue]))
        #expect(parameter == ["primary": "dark-blue", "others": ["red", "dark-blue"]])
    }

    @Test func everyIntegerWidth() throws {
        let value = Integers(
            int: -1,
            int8: .min,
            int16: .min,
            int32: .min,
            int64: .min,
            uint: 1,
            uint8: .max,
            uint16: .max,
            uint32: .max,
            uint64: UInt64(Int.max)
        )
        let parameter = try Parameter(encoding: value)
        #expect(
            parameter == [
                "int": .int(-1),
                "int8": .int(-128),
                "int16": .int(-32_768),
                "int32": .int(-2_147_483_648),
                "int64": .int(Int.min),
                "uint": .int(1),
                "uint8": .int(255),
                "uint16": .int(65_535),
                "uint32": .int(4_294_967_295),
                "uint64": .int(Int.max),
            ]
        )
    }

    @Test func integersInUnkeyedAndSingleValueContainers() throws {
        #expect(try Parameter(encoding: [Int8(-3), 4]) == [-3, 4])
        #expect(try Parameter(encoding: [UInt16(9)]) == [9])
        #expect(try Parameter(encoding: UInt32(7)) == .int(7))
        #expect(try Parameter(encoding: Int64(-7)) == .int(-7))
    }

    @Test func int128InRangeEncodesAndOutOfRangeThrows() throws {
        guard #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) else { return }
        #expect(try Parameter(encoding: ["small": Int128(-5)]) == ["small": -5])
        #expect(try Parameter(encoding: [UInt128(5)]) == [5])
        #expect(throws: CourierError.self) { try Parameter(encoding: Int128(Int.max) + 1) }
        #expect(throws: CourierError.self) { try Parameter(encoding: [UInt128.max]) }
    }

    @Test func uint64AboveIntMaxThrows() throws {
        let error = #expect(throws: CourierError.self) { try Parameter(encoding: Big(big: .max)) }
        guard case .parameterEncodingFailed(let reason, let underlying) = error else {
            Issue.record("expected parameterEncodingFailed, got \(String(describing: error))")
            return
        }
        #expect(error?.errorCode == -1016)
        #expect(reason.contains("18446744073709551615"))
        #expect(reason.contains("big"))
        guard case .invalidValue(_, let context) = underlying as? EncodingError else {
            Issue.record("expected an EncodingError underneath, got \(String(describing: underlying))")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["big"])
    }

    @Test func outOfRangeUnsignedThrowsInEveryContainer() {
        #expect(throws: CourierError.self) { try Parameter(encoding: UInt64.max) }
        #expect(throws: CourierError.self) { try Parameter(encoding: [UInt.max]) }
        #expect(throws: CourierError.self) { try Parameter(encoding: ["k": UInt64(Int.max) + 1]) }
    }

    @Test func floatsAndDoubles() throws {
        let parameter = try Parameter(encoding: Floats(float: 0.1, double: 0.1))
        #expect(parameter == ["float": .double(0.1), "double": .double(0.1)])
        #expect(try Parameter(encoding: Float(2.5)) == .double(2.5))
        #expect(try Parameter(encoding: [Float.infinity]) == [.double(.infinity)])
        #expect(try Parameter(encoding: -1e300) == .double(-1e300))
        guard case .double(let nan) = try Parameter(encoding: Double.nan) else {
            Issue.record("NaN did not encode as a double")
            return
        }
        #expect(nan.isNaN)
    }

    @Test func bools() throws {
        #expect(try Parameter(encoding: true) == .bool(true))
        #expect(try Parameter(encoding: ["on": false]) == ["on": .bool(false)])
        #expect(try Parameter(encoding: [true, false]) == [.bool(true), .bool(false)])
    }

    /// 2017-07-14T02:40:00Z.
    private static let date = Date(timeIntervalSince1970: 1_500_000_000)

    @Test func dateDeferredToDateIsSecondsSince2001() throws {
        let parameter = try Parameter(encoding: Stamped(at: Self.date))
        #expect(parameter == ["at": .double(521_692_800)])
        #expect(try Parameter(encoding: Date(timeIntervalSinceReferenceDate: -1.25)) == .double(-1.25))
    }

    @Test func dateSecondsSince1970() throws {
        let encoder = ParameterEncoder(dateEncodingStrategy: .secondsSince1970)
        #expect(try Parameter(encoding: Stamped(at: Self.date), encoder: encoder) == ["at": .double(1_500_000_000)])
    }

    @Test func dateMillisecondsSince1970() throws {
        let encoder = ParameterEncoder(dateEncodingStrategy: .millisecondsSince1970)
        let date = Self.date.addingTimeInterval(0.25)
        #expect(try Parameter(encoding: [date], encoder: encoder) == [.double(1_500_000_000_250)])
    }

    @Test func dateISO8601() throws {
        let encoder = ParameterEncoder(dateEncodingStrategy: .iso8601)
        #expect(try Parameter(encoding: Stamped(at: Self.date), encoder: encoder) == ["at": "2017-07-14T02:40:00Z"])
        #expect(
            try Parameter(encoding: Date(timeIntervalSinceReferenceDate: 0), encoder: encoder) == "2001-01-01T00:00:00Z"
        )
    }

    @Test func dateFormattedClosure() throws {
        let encoder = ParameterEncoder(dateEncodingStrategy: .formatted { "t=\(Int($0.timeIntervalSince1970))" })
        #expect(try Parameter(encoding: Stamped(at: Self.date), encoder: encoder) == ["at": "t=1500000000"])
    }

    @Test func dataRawAndBase64() throws {
        let bytes = Data([0x00, 0xFF, 0x10])
        #expect(try Parameter(encoding: Blob(bytes: bytes)) == ["bytes": .data(bytes)])

        let encoder = ParameterEncoder(dataEncodingStrategy: .base64)
        #expect(try Parameter(encoding: Blob(bytes: bytes), encoder: encoder) == ["bytes": "AP8Q"])
        #expect(try Parameter(encoding: [Data("hi".utf8)], encoder: encoder) == ["aGk="])
    }

    @Test func urlIsAbsoluteString() throws {
        let url = try #require(URL(string: "https://example.com/a?b=c"))
        #expect(try Parameter(encoding: Link(url: url)) == ["url": "https://example.com/a?b=c"])

        let base = try #require(URL(string: "https://example.com/dir/"))
        let relative = try #require(URL(string: "file.txt", relativeTo: base))
        #expect(try Parameter(encoding: relative) == "https://example.com/dir/file.txt")
    }

    @Test func decimalIsDouble() throws {
        let amount = try #require(Decimal(string: "12.34"))
        #expect(try Parameter(encoding: Price(amount: amount)) == ["amount": .double(12.34)])
        #expect(try Parameter(encoding: [Decimal(-3)]) == [.double(-3)])
    }

    @Test func snakeCaseKeys() throws {
        let value = CamelCase(
            firstName: "a",
            userID: 1,
            myURLValue: "u",
            alreadySnake: true,
            address1Line: "l",
            nested: .init(postCode: "p")
        )
        let encoder = ParameterEncoder(keyEncodingStrategy: .convertToSnakeCase)
        #expect(
            try Parameter(encoding: value, encoder: encoder) == [
                "first_name": "a",
                "user_id": 1,
                "my_url_value": "u",
                "already_snake": true,
                "address1_line": "l",
                "nested": ["post_code": "p"],
            ]
        )
        // Default keys are left alone.
        guard case .dictionary(let plain) = try Parameter(encoding: value) else {
            Issue.record("expected a dictionary")
            return
        }
        #expect(Set(plain.keys) == ["firstName", "userID", "myURLValue", "already_snake", "address1Line", "nested"])
    }

    @Test(
        arguments: [
            ("", ""),
            ("a", "a"),
            ("URL", "url"),
            ("URLValue", "url_value"),
            ("myURL", "my_url"),
            ("oneTwoThree", "one_two_three"),
            ("_leading", "_leading"),
            ("__privateValue__", "__private_value__"),
            ("some_Thing", "some_thing"),
            ("___", "___"),
            ("héllöWörld", "héllö_wörld"),
        ]
    )
    func snakeCaseConversion(input: String, expected: String) {
        #expect(ParameterEncoder.KeyEncodingStrategy.convertToSnakeCase.convert(input) == expected)
    }

    @Test func snakeCaseAppliesToDictionaryKeysLikeJSONEncoder() throws {
        let encoder = ParameterEncoder(keyEncodingStrategy: .convertToSnakeCase)
        #expect(try Parameter(encoding: ["someKey": 1], encoder: encoder) == ["some_key": 1])
    }

    @Test func customEncodeWithNestedContainersAndSuperEncoders() throws {
        let parameter = try Parameter(encoding: Custom())
        #expect(
            parameter == [
                "id": 7,
                "info": ["label": "here", "coordinates": [1.5, -2.5]],
                "list": ["first", ["label": "second"], [true, nil], "fourth"],
                "super": ["label": "from super"],
                "base": 42,
                "extra": nil,
            ]
        )
    }

    @Test func classHierarchyWithSuperEncoder() throws {
        let parameter = try Parameter(encoding: Dog(name: "Rex", breed: "collie"))
        #expect(parameter == ["breed": "collie", "super": ["name": "Rex"]])
    }

    @Test func classHierarchySharingTheEncoder() throws {
        let parameter = try Parameter(encoding: Cat(name: "Tom", lives: 9))
        #expect(parameter == ["lives": 9, "name": "Tom"])
    }

    @Test func topLevelArray() throws {
        #expect(try Parameter(encoding: ["a", "b"]) == ["a", "b"])
        #expect(try Parameter(encoding: [Phone(mobile: "1", home: nil)]) == [["mobile": "1"]])
        #expect(try Parameter(encoding: [Int]()) == .array([]))
    }

    @Test func topLevelScalars() throws {
        #expect(try Parameter(encoding: "text") == .string("text"))
        #expect(try Parameter(encoding: 42) == .int(42))
        #expect(try Parameter(encoding: 4.25) == .double(4.25))
        #expect(try ParameterEncoder().encode(Color.red) == .string("red"))
    }

    @Test func dictionariesEncodeAsDictionaries() throws {
        #expect(try Parameter(encoding: ["b": 2, "a": 1]) == ["a": 1, "b": 2])
        #expect(try Parameter(encoding: [1: "one"]) == ["1": "one"])
        #expect(try Parameter(encoding: [String: Int]()) == .dictionary([:]))
    }

    @Test func throwingEncodePropagatesUnchanged() {
        #expect(throws: Boom.failed(3)) { try Parameter(encoding: Throwing(code: 3)) }
        #expect(throws: Boom.failed(5)) {
            try Parameter(encoding: HoldsThrowing(items: [Throwing(code: 5), Throwing(code: 6)]))
        }
    }

    @Test func valueThatWritesNothingIsEmptyDictionary() throws {
        #expect(try Parameter(encoding: Silent()) == .dictionary([:]))
        #expect(try Parameter(encoding: EmptyModel()) == .dictionary([:]))
        #expect(try Parameter(encoding: ["inner": Silent()]) == ["inner": .dictionary([:])])
        #expect(try Parameter(encoding: [Silent()]) == [.dictionary([:])])
    }

    @Test func sameKeyTwiceLastWins() throws {
        #expect(try Parameter(encoding: Twice()) == ["key": "second", "shape": ["now": true]])
    }

    @Test func mixingContainerKindsNeverTraps() throws {
        #expect(try Parameter(encoding: Fickle()) == [2])
    }

    @Test func codingPathsAreReported() throws {
        let holder = PathHolder(
            here: PathReporter(), list: [PathReporter(), PathReporter()], map: ["k": PathReporter()])
        #expect(
            try Parameter(encoding: holder) == ["here": "here", "list": ["list/0", "list/1"], "map": ["k": "map/k"]])
        #expect(try Parameter(encoding: PathReporter()) == "")
    }

    @Test func userInfoReachesEncodeTo() throws {
        let key = try #require(UserInfoReader.key)
        let encoder = ParameterEncoder(userInfo: [key: "hello"])
        #expect(try Parameter(encoding: UserInfoReader(), encoder: encoder) == "hello")
        #expect(try Parameter(encoding: UserInfoReader()) == "missing")
    }

    @Test func nestedParameterIsKeptAsIs() throws {
        let raw: Parameter = .set(["x", "y"])
        let encoder = ParameterEncoder(dataEncodingStrategy: .base64, keyEncodingStrategy: .convertToSnakeCase)
        let parameter = try Parameter(encoding: WithParameter(name: "n", raw: raw), encoder: encoder)
        #expect(parameter == ["name": "n", "raw": .set(["x", "y"])])
        #expect(try Parameter(encoding: Parameter.data(Data([1])), encoder: encoder) == .data(Data([1])))
    }

    @Test func encoderIsSendable() async throws {
        let encoder = ParameterEncoder(dateEncodingStrategy: .formatted { _ in "fixed" })
        let parameter = try await Task.detached { try encoder.encode(Stamped(at: Date())) }.value
        #expect(parameter == ["at": "fixed"])
    }

    @Test func queryStringMatchesAFNetworking() throws {
        let model = Query(
            name: "bang & co",
            phone: Phone(mobile: "xx", home: nil),
            tags: ["a", "b"],
            n: 1,
            active: true,
            ratio: 0.5,
            note: nil
        )
        #expect(
            QueryString.encode(try Parameter(encoding: model))
                == "active=1&n=1&name=bang%20%26%20co&phone%5Bmobile%5D=xx&ratio=0.5&tags%5B%5D=a&tags%5B%5D=b"
        )
    }
}
