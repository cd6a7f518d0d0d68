import Foundation
import Testing

@testable import Courier

/// ``JSON/foundationObject``: what AFNetworking code that casts to `[String: Any]` gets, equal to what
/// `JSONSerialization` makes of the same bytes.
struct JSONFoundationObjectTests {
    @Test("The same Foundation objects as JSONSerialization, exact integers, booleans kept as booleans")
    func sameAsJSONSerialization() throws {
        let text =
            #"{"id":9007199254740993,"name":"Ada","admin":false,"score":1.5,"tags":["a",null,2],"nested":{"ok":true}}"#
        let json = try JSON(data: Data(text.utf8))
        let object = try #require(json.foundationObject as? [String: Any])
        #expect(object["name"] as? String == "Ada")
        #expect((object["id"] as? NSNumber)?.int64Value == 9_007_199_254_740_993)
        #expect((object["score"] as? NSNumber)?.doubleValue == 1.5)
        #expect(object["admin"] as? Bool == false)
        let tags = try #require(object["tags"] as? [Any])
        #expect(tags.count == 3 && tags[1] is NSNull && (tags[2] as? NSNumber)?.intValue == 2)
        #expect((object["nested"] as? [String: Any])?["ok"] as? Bool == true)
        let reference = try JSONSerialization.jsonObject(with: Data(text.utf8))
        #expect(
            try JSONSerialization.data(withJSONObject: json.foundationObject, options: .sortedKeys)
                == JSONSerialization.data(withJSONObject: reference, options: .sortedKeys))
    }
}
