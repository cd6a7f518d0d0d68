import Foundation
import Testing

@testable import Courier
@testable import CourierImageDecoding

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if os(Linux)
    import CCourierImageTestSupport

    /// ``SystemImageDecoder`` on files made in the tests, whose pixels are known: PNG from ``TestPNG`` (every colour
    /// type, bit depth and interlacing), JPEG from libjpeg's encoder (baseline and progressive; grey, colour and
    /// CMYK) over flat 8 × 8 blocks at quality 100, which the DCT carries exactly. The loops yield, as the fuzz tests
    /// do, so that they do not hold one of the cooperative pool's two threads for their whole run.
    @Suite struct SystemImageDecoderTests {
        struct PNGCase: Sendable, CustomTestStringConvertible {
            var colorType: TestPNG.ColorType
            var depth: Int
            var interlaced: Bool
            var transparency: Bool
            var testDescription: String {
                "type \(colorType.rawValue), \(depth)-bit\(interlaced ? ", Adam7" : "")\(transparency ? ", tRNS" : "")"
            }
        }

        static let pngCases: [PNGCase] = TestPNG.ColorType.allCases.flatMap { type in
            type.depths.flatMap { depth in
                [false, true].flatMap { interlaced in
                    [false, true].map {
                        PNGCase(colorType: type, depth: depth, interlaced: interlaced, transparency: $0)
                    }
                }
            }
        }

        @Test(arguments: pngCases)
        func pngIsPixelExact(_ testCase: PNGCase) async throws {
            for (width, height) in [(13, 11), (1, 1), (9, 3)] {
                await Task.yield()
                let png = TestPNG.pattern(
                    width: width, height: height, colorType: testCase.colorType, depth: testCase.depth,
                    interlaced: testCase.interlaced, transparency: testCase.transparency)
                let image = try SystemImageDecoder().decode(try ImageData(data: png.data))
                let bitmap = try #require(image.bitmap)
                #expect(bitmap.width == width && bitmap.height == height)
                #expect(bitmap.pixels == png.expectedRGBA, "\(width)×\(height)")
            }
        }

        /// A `width` × `height` image of flat 8 × 8 blocks with seeded random values, `components` bytes a pixel.
        static func blocks(width: Int, height: Int, components: Int, block: Int = 8, seed: UInt64) -> [UInt8] {
            var generator = SeededGenerator(seed: seed)
            let columns = (width + block - 1) / block
            let rows = (height + block - 1) / block
            let colours = (0..<(columns * rows)).map { _ in
                (0..<components).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            var pixels: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width { pixels += colours[(y / block) * columns + x / block] }
            }
            return pixels
        }

        static func jpeg(
            _ pixels: [UInt8], width: Int, height: Int, components: Int, progressive: Bool, sampling: Int = 1
        ) throws -> Data {
            var out: UnsafeMutablePointer<UInt8>?
            var size = 0
            let status = courier_test_jpeg_encode(
                pixels, UInt32(width), UInt32(height), Int32(components), 100, progressive ? 1 : 0, Int32(sampling),
                &out, &size)
            let file = try #require(out)
            defer { courier_test_free(file) }
            try #require(status == 0)
            return Data(bytes: file, count: size)
        }

        /// libjpeg's JFIF colour conversion there and back, in its fixed-point arithmetic: what a flat colour block
        /// decodes to.
        static func jfifRoundTrip(_ r: Int, _ g: Int, _ b: Int) -> [UInt8] {
            func fix(_ x: Double) -> Int { Int(x * 65536 + 0.5) }
            let half = 1 << 15
            let offset = 128 << 16
            let y = (fix(0.29900) * r + fix(0.58700) * g + fix(0.11400) * b + half) >> 16
            let cb = (-fix(0.16874) * r - fix(0.33126) * g + fix(0.5) * b + offset + half - 1) >> 16
            let cr = (fix(0.5) * r - fix(0.41869) * g - fix(0.08131) * b + offset + half - 1) >> 16
            let red = y + ((fix(1.40200) * (cr - 128) + half) >> 16)
            let green = y + ((-fix(0.34414) * (cb - 128) - fix(0.71414) * (cr - 128) + half) >> 16)
            let blue = y + ((fix(1.77200) * (cb - 128) + half) >> 16)
            return [red, green, blue].map { UInt8(min(255, max(0, $0))) } + [255]
        }

        @Test(arguments: [false, true])
        func greyJPEGIsPixelExact(progressive: Bool) throws {
            let (width, height) = (40, 27)
            let grey = Self.blocks(width: width, height: height, components: 1, seed: 7)
            let file = try Self.jpeg(grey, width: width, height: height, components: 1, progressive: progressive)
            let bitmap = try #require(try SystemImageDecoder().decode(try ImageData(data: file)).bitmap)
            #expect(bitmap.pixels == grey.flatMap { [$0, $0, $0, 255] })
        }

        @Test(arguments: [false, true])
        func colourJPEGIsPixelExact(progressive: Bool) throws {
            let (width, height) = (48, 24)
            let rgb = Self.blocks(width: width, height: height, components: 3, seed: 11)
            let file = try Self.jpeg(rgb, width: width, height: height, components: 3, progressive: progressive)
            let bitmap = try #require(try SystemImageDecoder().decode(try ImageData(data: file)).bitmap)
            let expected = stride(from: 0, to: rgb.count, by: 3).flatMap {
                Self.jfifRoundTrip(Int(rgb[$0]), Int(rgb[$0 + 1]), Int(rgb[$0 + 2]))
            }
            #expect(bitmap.pixels == expected)
        }

        @Test("4:2:0 colour: away from the 32 × 32 blocks' edges, where chroma is not blended, pixels are exact")
        func subsampledJPEG() throws {
            let (width, height) = (64, 64)
            let rgb = Self.blocks(width: width, height: height, components: 3, block: 32, seed: 13)
            let file = try Self.jpeg(
                rgb, width: width, height: height, components: 3, progressive: false, sampling: 2)
            let bitmap = try #require(try SystemImageDecoder().decode(try ImageData(data: file)).bitmap)
            for y in [4, 12, 20, 27, 36, 44, 52, 59] {
                for x in [4, 12, 20, 27, 36, 44, 52, 59] {
                    let source = (y * width + x) * 3
                    #expect(
                        bitmap[x, y]
                            == Self.jfifRoundTrip(Int(rgb[source]), Int(rgb[source + 1]), Int(rgb[source + 2])),
                        "(\(x), \(y))")
                }
            }
        }

        @Test("CMYK (Adobe, inverted) becomes RGB: R = C × K / 255")
        func cmykJPEG() throws {
            let (width, height) = (16, 16)
            let cmyk = Self.blocks(width: width, height: height, components: 4, seed: 17)
            let file = try Self.jpeg(cmyk, width: width, height: height, components: 4, progressive: false)
            let bitmap = try #require(try SystemImageDecoder().decode(try ImageData(data: file)).bitmap)
            let expected = stride(from: 0, to: cmyk.count, by: 4).flatMap { index -> [UInt8] in
                let k = Int(cmyk[index + 3])
                return (0..<3).map { UInt8((Int(cmyk[index + $0]) * k + 127) / 255) } + [255]
            }
            #expect(bitmap.pixels == expected)
        }

        static func corpus() throws -> [(String, Data)] {
            let png = TestPNG.pattern(width: 13, height: 11, colorType: .rgba, depth: 8, interlaced: false).data
            let adam7 = TestPNG.pattern(width: 13, height: 11, colorType: .palette, depth: 4, interlaced: true).data
            let rgb = Self.blocks(width: 24, height: 16, components: 3, seed: 3)
            return [
                ("png", png), ("adam7", adam7),
                ("baseline", try Self.jpeg(rgb, width: 24, height: 16, components: 3, progressive: false)),
                ("progressive", try Self.jpeg(rgb, width: 24, height: 16, components: 3, progressive: true)),
            ]
        }

        @Test(
            "Every truncation whose headers still parse is a -1016 error with the bytes, never a partial image",
            .cpuBound)
        func truncatedFilesThrow() async throws {
            for (name, file) in try Self.corpus() {
                var checked = 0
                for length in 1..<file.count {
                    await Task.yield()
                    let prefix = file.prefix(length)
                    guard let imageData = try? ImageData(data: prefix) else { continue }
                    checked += 1
                    do {
                        let image = try SystemImageDecoder().decode(imageData)
                        Issue.record("\(name) cut at \(length) of \(file.count) decoded: \(image.pixelWidth)")
                    } catch let error as CourierError {
                        #expect(error.errorCode == -1016)
                        #expect(error.responseData == prefix)
                        #expect(error.underlyingError is ImageCodecError)
                    }
                }
                #expect(checked > file.count / 2, "\(name)")
            }
        }

        @Test("Corrupted bytes never crash: an error, or an image of the header's size", .cpuBound)
        func corruptedFilesNeverCrash() async throws {
            var generator = SeededGenerator(seed: 99)
            for (name, file) in try Self.corpus() {
                for _ in 0..<300 {
                    await Task.yield()
                    var bytes = [UInt8](file)
                    for _ in 0..<Int.random(in: 1...4, using: &generator) {
                        let index = Int.random(in: 0..<bytes.count, using: &generator)
                        bytes[index] = UInt8.random(in: 0...255, using: &generator)
                    }
                    guard let imageData = try? ImageData(data: Data(bytes)) else { continue }
                    if let image = try? SystemImageDecoder().decode(imageData) {
                        #expect(image.bitmap?.pixels.count == image.pixelWidth * image.pixelHeight * 4, "\(name)")
                    }
                }
            }
        }

        @Test("A decoded image drops its encoded bytes unless told to keep them")
        func encodedBytes() throws {
            let file = TestPNG.pattern(width: 5, height: 4, colorType: .rgb, depth: 8, interlaced: false).data
            let dropped = try SystemImageDecoder().decode(try ImageData(data: file))
            #expect(dropped.data.isEmpty)
            #expect(dropped.pixelWidth == 5 && dropped.pixelHeight == 4 && dropped.format == .png)
            #expect(dropped.bitmap?.pixels.count == 80)
            let kept = try SystemImageDecoder(keepsEncodedBytes: true).decode(try ImageData(data: file))
            #expect(kept.data == file)
            #expect(kept.bitmap == dropped.bitmap)
        }

        @Test("An image over the pixel limit is refused before decoding")
        func pixelLimit() throws {
            let png = TestPNG.pattern(width: 13, height: 11, colorType: .rgb, depth: 8, interlaced: false)
            let decoder = SystemImageDecoder(maximumPixelCount: 100)
            let error = try #require(
                throws: CourierError.self, performing: { try decoder.decode(try ImageData(data: png.data)) })
            #expect(error.errorCode == -1016)
            #expect(error.underlyingError as? ImageCodecError == .tooLarge(width: 13, height: 11, limit: 100))
        }

        @Test("A format the platform does not decode keeps its size and has no pixels")
        func otherFormatsHaveNoPixels() throws {
            let gif = Data("GIF89a".utf8 + [5, 0, 3, 0, 0, 0, 0])
            let image = try SystemImageDecoder().decode(try ImageData(data: gif))
            #expect(image.bitmap == nil)
            #expect(image.pixelWidth == 5 && image.pixelHeight == 3)
        }

        @Test("The downloader decodes on its queue and hands out pixels")
        func downloaderWithPixels() async throws {
            let server = try await ImageServer.start()
            let downloader = ImageDownloader(
                session: HTTPSessionManager(), imageCache: nil, decoder: SystemImageDecoder(),
                callbackQueue: DispatchQueue(label: "pixels"))
            let image = try await downloader.image(for: URLRequest(url: server.url("pixels")))
            let expected = TestPNG.pattern(width: 7, height: 2, colorType: .rgb, depth: 8, interlaced: false)
            #expect(image.bitmap?.pixels == expected.expectedRGBA)
            try await server.stop()
        }
    }
#endif
