import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking's `AFAutoPurgingImageCacheTests`, with an image whose cost is AFNetworking's retina logo's:
/// 510 × 500 pixels × 4 = 1,020,000 bytes.
@Suite struct AutoPurgingImageCacheTests {
    /// An image of `width` × `height` pixels (its headers only: the cache never looks at pixels).
    static func image(width: Int = 510, height: Int = 500) throws -> Image {
        let png = TestPNG(width: width, height: height, colorType: .gray, depth: 8, samples: [])
        return Image(imageData: try ImageData(data: Data(png.headerOnly)))
    }

    static let imageSize: UInt64 = 1_020_000
    let request = URLRequest(url: URL(string: "http://test.com/image")!)

    @Test func costIsWidthTimesHeightTimesFour() throws {
        #expect(try Self.image().cost == Self.imageSize)
        #expect(
            try Self.image(width: Int(Int32.max), height: Int(Int32.max)).cost == UInt64(Int32.max) * UInt64(Int32.max)
                * 4)
    }

    @Test func returnsImagesByIdentifierAndRequest() throws {
        let cache = AutoPurgingImageCache()
        let image = try Self.image()
        cache.add(image, withIdentifier: "logo")
        #expect(cache.image(withIdentifier: "logo") == image)
        cache.add(image, for: request, withAdditionalIdentifier: nil)
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == image)
        cache.add(image, for: request, withAdditionalIdentifier: "filter")
        #expect(cache.image(for: request, withAdditionalIdentifier: "filter") == image)
        let other = URLRequest(url: URL(string: "http://test.com/differentImage")!)
        #expect(cache.image(for: other, withAdditionalIdentifier: nil) == nil)
        #expect(cache.shouldCache(image, for: request, withAdditionalIdentifier: nil))
    }

    @Test func anAdditionalIdentifierMustMatch() throws {
        let cache = AutoPurgingImageCache()
        cache.add(try Self.image(), for: request, withAdditionalIdentifier: "filter")
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == nil)
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: nil))
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: "nofilter"))
        #expect(cache.image(for: request, withAdditionalIdentifier: "filter") != nil)
    }

    @Test("Keys do not collide where AFNetworking's concatenation did")
    func keysDoNotCollide() throws {
        let cache = AutoPurgingImageCache()
        let first = try Self.image(width: 1, height: 1)
        let second = try Self.image(width: 2, height: 2)
        let b = URLRequest(url: URL(string: "http://a/b")!)
        let bc = URLRequest(url: URL(string: "http://a/bc")!)
        cache.add(first, for: b, withAdditionalIdentifier: "c")
        cache.add(second, for: bc, withAdditionalIdentifier: nil)
        #expect(cache.image(for: b, withAdditionalIdentifier: "c") == first)
        #expect(cache.image(for: bc, withAdditionalIdentifier: nil) == second)
        #expect(cache.image(for: bc, withAdditionalIdentifier: "") == nil)
        #expect(ImageCacheKey.identifier(for: b, withAdditionalIdentifier: "c") == "http://a/b\u{0}c")
    }

    @Test func replacingAnImageReturnsTheNewOneAndAdjustsTheUsage() throws {
        let cache = AutoPurgingImageCache()
        cache.add(try Self.image(), for: request, withAdditionalIdentifier: nil)
        let newer = try Self.image(width: 10, height: 10)
        cache.add(newer, for: request, withAdditionalIdentifier: nil)
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == newer)
        #expect(cache.memoryUsage == 400)
        #expect(cache.count == 1)
    }

    @Test func removingReportsWhetherThereWasAnImage() throws {
        let cache = AutoPurgingImageCache()
        cache.add(try Self.image(), withIdentifier: "logo")
        #expect(cache.removeImage(withIdentifier: "logo"))
        #expect(!cache.removeImage(withIdentifier: "logo"))
        #expect(cache.image(withIdentifier: "logo") == nil)
        cache.add(try Self.image(), for: request, withAdditionalIdentifier: "filter")
        #expect(cache.removeImage(for: request, withAdditionalIdentifier: "filter"))
        #expect(!cache.removeImage(for: request, withAdditionalIdentifier: "filter"))
        #expect(!cache.removeAllImages())
        cache.add(try Self.image(), withIdentifier: "a")
        cache.add(try Self.image(), withIdentifier: "b")
        #expect(cache.removeAllImages())
        #expect(cache.memoryUsage == 0)
        #expect(cache.image(withIdentifier: "a") == nil)
    }

    @Test func memoryUsageFollowsAddsAndRemoves() throws {
        let cache = AutoPurgingImageCache()
        #expect(cache.memoryUsage == 0)
        cache.add(try Self.image(), withIdentifier: "logo")
        #expect(cache.memoryUsage == Self.imageSize)
        cache.removeImage(withIdentifier: "logo")
        #expect(cache.memoryUsage == 0)
    }

    @Test("The 11th image of a cache for 10 purges it down to 6")
    func purgesWhenTheCapacityIsReached() throws {
        let cache = AutoPurgingImageCache(
            memoryCapacity: 10 * Self.imageSize, preferredMemoryCapacityAfterPurge: 6 * Self.imageSize)
        let image = try Self.image()
        for index in 1...11 {
            cache.add(image, withIdentifier: "image-\(index)")
            #expect(cache.memoryUsage == UInt64(index <= 10 ? index : 6) * Self.imageSize)
        }
    }

    @Test("With the defaults, the 103rd image purges down to 60 MiB: 61 images")
    func purgesWithTheDefaults() throws {
        let cache = AutoPurgingImageCache()
        #expect(cache.memoryCapacity == 104_857_600)
        #expect(cache.preferredMemoryUsageAfterPurge == 62_914_560)
        let image = try Self.image()
        for index in 1...102 { cache.add(image, withIdentifier: "image-\(index)") }
        #expect(cache.memoryUsage == 102 * Self.imageSize)
        cache.add(image, withIdentifier: "image-103")
        #expect(cache.memoryUsage == 61 * Self.imageSize)
        #expect(cache.image(withIdentifier: "image-42") == nil)
        #expect(cache.image(withIdentifier: "image-43") != nil)
    }

    @Test("A purge removes the images accessed least recently")
    func purgeOrderIsLastAccess() throws {
        let cache = AutoPurgingImageCache(
            memoryCapacity: 10 * Self.imageSize, preferredMemoryCapacityAfterPurge: 6 * Self.imageSize)
        let image = try Self.image()
        for index in 0..<10 { cache.add(image, withIdentifier: "image-\(index)") }
        #expect(cache.image(withIdentifier: "image-0") != nil)
        let before = cache.memoryUsage
        cache.add(image, withIdentifier: "image-10")
        #expect(cache.memoryUsage < before)
        for index in 0...10 {
            let cached = cache.image(withIdentifier: "image-\(index)")
            #expect((cached != nil) == (index == 0 || index >= 6), "image-\(index)")
        }
    }

    @Test("Adds and reads from many threads keep the usage exact")
    func concurrentUse() async throws {
        let cache = AutoPurgingImageCache(memoryCapacity: 40 * 400, preferredMemoryCapacityAfterPurge: 20 * 400)
        let image = try Self.image(width: 10, height: 10)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        cache.add(image, withIdentifier: "\(worker)-\(index % 37)")
                        _ = cache.image(withIdentifier: "\((worker + 1) % 8)-\(index % 37)")
                        if index % 50 == 0 { cache.removeImage(withIdentifier: "\(worker)-0") }
                    }
                }
            }
        }
        #expect(cache.memoryUsage == UInt64(cache.count) * 400)
        #expect(cache.memoryUsage <= 40 * 400)
    }
}

extension TestPNG {
    /// The signature and the IHDR chunk alone: enough for ``ImageData`` to read the size.
    var headerOnly: [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + Self.chunk(
                "IHDR",
                Self.be32(width) + Self.be32(height) + [UInt8(depth), colorType.rawValue, 0, 0, interlaced ? 1 : 0])
    }
}
