import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct ImageResponseSerializerTests {
    private typealias F = ResponseFixtures

    /// A minimal PNG: the 8-byte signature and an IHDR chunk (with a correct CRC), nothing else.
    private static func png(width: UInt32, height: UInt32) -> Data {
        var chunk = Data("IHDR".utf8)
        for value in [width, height] {
            chunk.append(contentsOf: withUnsafeBytes(of: value.bigEndian, Array.init))
        }
        chunk.append(contentsOf: [8, 6, 0, 0, 0])  // 8-bit RGBA, deflate, adaptive filtering, no interlace
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        data.append(contentsOf: [0, 0, 0, 13])
        data.append(chunk)
        data.append(contentsOf: withUnsafeBytes(of: crc32(chunk).bigEndian, Array.init))
        return data
    }

    private static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }

    @Test func fixtureIsAWellFormedPNGHeader() {
        let data = Self.png(width: 3, height: 2)
        #expect(data.count == 33)
        #expect(Self.crc32(Data("IHDR".utf8)) == 0xA8A1_AE0A)
    }

    @Test func defaults() {
        let serializer = ImageResponseSerializer()
        #expect(serializer.imageScale == 1)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.acceptableContentTypes == ImageResponseSerializer.imageContentTypes)
        for type in ["image/png", "image/jpeg", "image/gif", "image/tiff", "image/bmp", "image/x-icon", "image/webp"] {
            #expect(ImageResponseSerializer.imageContentTypes.contains(type))
        }
        #expect(!ImageResponseSerializer.imageContentTypes.contains("text/plain"))
    }

    @Test func readsAPNG() throws {
        let data = Self.png(width: 640, height: 480)
        let image = try #require(
            try ImageResponseSerializer().serialize(response: F.response(contentType: "image/png"), data: data))
        #expect(image.format == .png)
        #expect(image.pixelWidth == 640)
        #expect(image.pixelHeight == 480)
        #expect(image.data == data)
        #expect(image.scale == 1)
    }

    @Test func imageScaleIsApplied() throws {
        let serializer = ImageResponseSerializer(imageScale: 2)
        let image = try #require(
            try serializer.serialize(
                response: F.response(contentType: "image/png"), data: Self.png(width: 100, height: 50)))
        #expect(image.scale == 2)
        #expect(image.width == 50)
        #expect(image.height == 25)
    }

    @Test func formatComesFromTheBytesNotTheHeader() throws {
        let image = try ImageResponseSerializer()
            .serialize(response: F.response(contentType: "image/jpeg"), data: Self.png(width: 1, height: 1))
        #expect(image?.format == .png)
    }

    @Test func nilResponseIsNotValidated() throws {
        let image = try ImageResponseSerializer().serialize(response: nil, data: Self.png(width: 7, height: 9))
        #expect(image?.pixelWidth == 7)
        #expect(image?.pixelHeight == 9)
    }

    @Test func unacceptableContentTypeWithBodyIsRejected() throws {
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer().serialize(
                response: F.response(contentType: "text/plain"), data: Self.png(width: 1, height: 1))
        }
        guard case .unacceptableContentType("text/plain", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
    }

    @Test func unacceptableContentTypeWithoutBodyGivesNil() throws {
        let serializer = ImageResponseSerializer()
        #expect(try serializer.serialize(response: F.response(contentType: "text/plain"), data: Data()) == nil)
        #expect(try serializer.serialize(response: F.response(contentType: "text/plain"), data: nil) == nil)
    }

    @Test func emptyBodyGivesNil() throws {
        let serializer = ImageResponseSerializer()
        #expect(try serializer.serialize(response: F.response(contentType: "image/png"), data: Data()) == nil)
        #expect(try serializer.serialize(response: F.response(contentType: "image/png"), data: nil) == nil)
        #expect(try serializer.serialize(response: nil, data: nil) == nil)
    }

    @Test(arguments: [
        Data("garbage bytes".utf8),
        Data([0x89, 0x50, 0x4E, 0x47]),
        Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        Data([0x00, 0x01, 0x02]),
    ])
    func garbageIsASerializationError(data: Data) throws {
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer().serialize(response: F.response(contentType: "image/png"), data: data)
        }
        guard case .responseSerializationFailed(_, let context, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(underlying is ImageDecodingError)
        #expect(context.data == data)
    }

    @Test func truncatedPNGIsASerializationError() throws {
        let data = Self.png(width: 10, height: 10).prefix(20)
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer().serialize(response: F.response(contentType: "image/png"), data: data)
        }
        #expect(error.underlyingError as? ImageDecodingError == .truncated(.png))
    }

    @Test func zeroSizedPNGIsASerializationError() throws {
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer()
                .serialize(response: F.response(contentType: "image/png"), data: Self.png(width: 0, height: 5))
        }
        #expect(error.errorCode == -1016)
    }

    @Test func statusErrorCarriesTheImage() throws {
        let data = Self.png(width: 4, height: 4)
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer().serialize(response: F.response(404, contentType: "image/png"), data: data)
        }
        #expect(error.errorCode == -1011)
        #expect((error.serializedObject as? ImageData)?.pixelWidth == 4)
        #expect(error.responseData == data)
    }

    @Test func statusErrorWithWrongTypeHasContentTypeErrorUnderneath() throws {
        let error = try #require(throws: CourierError.self) {
            try ImageResponseSerializer().serialize(
                response: F.response(404, contentType: "text/html"), data: F.data("<h1>"))
        }
        #expect(error.errorCode == -1011)
        #expect((error.underlyingError as? CourierError)?.errorCode == -1016)
        #expect(error.serializedObject == nil)
    }
}
