import Foundation
import Testing

@testable import Courier

// MARK: - Fixtures

/// Builders for minimal image files, byte by byte: each file ends right after the last header byte Courier needs, so
/// every shorter prefix of it must fail to decode.
private enum Fixture {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func be16(_ value: Int) -> [UInt8] { le16(value).reversed() }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
    static func be32(_ value: UInt32) -> [UInt8] { le32(value).reversed() }
    static func ascii(_ string: String) -> [UInt8] { Array(string.utf8) }

    /// The CRC-32 that closes a PNG chunk.
    static func crc32(_ bytes: [UInt8]) -> UInt32 { TestPNG.crc32(bytes) }

    /// A PNG signature and a whole IHDR chunk (8-bit RGB), CRC included.
    static func png(width: UInt32, height: UInt32, firstChunk: String = "IHDR", length: UInt32 = 13) -> Data {
        let body = ascii(firstChunk) + be32(width) + be32(height) + [8, 2, 0, 0, 0]
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(length) + body + be32(crc32(body)))
    }

    /// The JFIF APP0 segment a typical encoder writes first.
    static let app0: [UInt8] = [0xFF, 0xE0] + be16(16) + ascii("JFIF") + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]

    /// SOI, APP0, `beforeFrame`, then a whole three-component frame header with marker `frameMarker`.
    static func jpeg(width: Int, height: Int, frameMarker: UInt8 = 0xC0, beforeFrame: [UInt8] = []) -> Data {
        let components: [UInt8] = [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        let frame: [UInt8] = [0xFF, frameMarker] + be16(17) + [8] + be16(height) + be16(width) + components
        return Data([0xFF, 0xD8] + app0 + beforeFrame + frame)
    }

    /// A GIF signature and logical screen descriptor.
    static func gif(width: Int, height: Int, version: String = "89a") -> Data {
        Data(ascii("GIF" + version) + le16(width) + le16(height) + [0, 0, 0])
    }

    /// A BMP file header and BITMAPINFOHEADER (24 bits per pixel); a negative height makes it top-down.
    static func bmp(width: Int32, height: Int32) -> Data {
        let fileHeader = ascii("BM") + le32(54) + [0, 0, 0, 0] + le32(54)
        let info =
            le32(40) + le32(UInt32(bitPattern: width)) + le32(UInt32(bitPattern: height)) + le16(1) + le16(24)
            + [UInt8](repeating: 0, count: 24)
        return Data(fileHeader + info)
    }

    /// A BMP file header and OS/2 BITMAPCOREHEADER, whose width and height are unsigned 16-bit.
    static func bmpCore(width: Int, height: Int) -> Data {
        Data(
            ascii("BM") + le32(26) + [0, 0, 0, 0] + le32(26) + le32(12) + le16(width) + le16(height) + le16(1)
                + le16(24))
    }

    /// One TIFF IFD entry with a single value of `type` (3 SHORT, 4 LONG), left-justified in the value field.
    static func tiffEntry(tag: Int, type: Int, value: UInt32, bigEndian: Bool, count: UInt32 = 1) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { bigEndian ? be16(value) : le16(value) }
        func u32(_ value: UInt32) -> [UInt8] { bigEndian ? be32(value) : le32(value) }
        let field = type == 3 ? u16(Int(value)) + [0, 0] : u32(value)
        return u16(tag) + u16(type) + u32(count) + field
    }

    /// A TIFF header and a whole first IFD describing an uncompressed 8-bit greyscale image in one strip. `entries`
    /// replaces the IFD's entries when given.
    static func tiff(
        width: UInt32, height: UInt32, bigEndian: Bool = false, widthType: Int = 3, heightType: Int = 4,
        entries: [[UInt8]]? = nil
    ) -> Data {
        func entry(_ tag: Int, _ type: Int, _ value: UInt32) -> [UInt8] {
            tiffEntry(tag: tag, type: type, value: value, bigEndian: bigEndian)
        }
        let ifd =
            entries ?? [
                entry(254, 4, 0),  // NewSubfileType
                entry(256, widthType, width),  // ImageWidth
                entry(257, heightType, height),  // ImageLength
                entry(258, 3, 8),  // BitsPerSample
                entry(259, 3, 1),  // Compression: none
                entry(262, 3, 1),  // PhotometricInterpretation: BlackIsZero
                entry(273, 4, 8),  // StripOffsets
                entry(277, 3, 1),  // SamplesPerPixel
                entry(278, 4, height),  // RowsPerStrip
                entry(279, 4, width &* height),  // StripByteCounts
            ]
        let header = bigEndian ? ascii("MM") + be16(42) + be32(8) : ascii("II") + le16(42) + le32(8)
        let count = bigEndian ? be16(ifd.count) : le16(ifd.count)
        return Data(header + count + ifd.flatMap { $0 } + [0, 0, 0, 0])
    }

    /// An ICO header and one 16-byte directory entry per (width, height) byte pair; `declared` overrides the count.
    static func ico(_ sizes: [(UInt8, UInt8)], declared: Int? = nil) -> Data {
        var bytes: [UInt8] = [0, 0, 1, 0] + le16(declared ?? sizes.count)
        for (index, size) in sizes.enumerated() {
            bytes +=
                [size.0, size.1, 0, 0] + le16(1) + le16(32) + le32(40) + le32(UInt32(6 + 16 * sizes.count + index))
        }
        return Data(bytes)
    }

    /// A RIFF/WEBP header and the start of a first chunk called `fourCC` holding `payload`.
    static func webp(_ fourCC: String, _ payload: [UInt8]) -> Data {
        let chunk = ascii(fourCC) + le32(UInt32(payload.count)) + payload
        return Data(ascii("RIFF") + le32(UInt32(4 + chunk.count)) + ascii("WEBP") + chunk)
    }

    /// A lossy WebP: frame tag of a key frame, start code, then the 14-bit sizes (upper 2 bits are scaling).
    static func webpLossy(width: Int, height: Int, startCode: [UInt8] = [0x9D, 0x01, 0x2A]) -> Data {
        webp("VP8 ", [0x30, 0x03, 0x00] + startCode + le16(width) + le16(height))
    }

    /// A lossless WebP: signature 0x2F, then width - 1 and height - 1 in 14 bits each, alpha and version bits.
    static func webpLossless(width: Int, height: Int, alpha: Bool = false, version: UInt32 = 0) -> Data {
        let bits = UInt32(width - 1) | UInt32(height - 1) << 14 | (alpha ? 1 << 28 : 0) | version << 29
        return webp("VP8L", [0x2F] + le32(bits))
    }

    /// An extended WebP: flags, 3 reserved bytes, then the 24-bit canvas width - 1 and height - 1.
    static func webpExtended(width: Int, height: Int) -> Data {
        let le24 = { (value: Int) in Array(le32(UInt32(value))[0..<3]) }
        return webp("VP8X", [0x10, 0, 0, 0] + le24(width - 1) + le24(height - 1))
    }

    /// Every builder at 37 × 19, labelled.
    static let all: [(name: String, format: ImageFormat, data: Data)] = [
        ("png", .png, png(width: 37, height: 19)),
        ("jpeg", .jpeg, jpeg(width: 37, height: 19)),
        ("gif", .gif, gif(width: 37, height: 19)),
        ("gif87a", .gif, gif(width: 37, height: 19, version: "87a")),
        ("bmp", .bmp, bmp(width: 37, height: 19)),
        ("bmp top-down", .bmp, bmp(width: 37, height: -19)),
        ("bmp core", .bmp, bmpCore(width: 37, height: 19)),
        ("tiff II", .tiff, tiff(width: 37, height: 19)),
        ("tiff MM", .tiff, tiff(width: 37, height: 19, bigEndian: true)),
        ("tiff MM long/short", .tiff, tiff(width: 37, height: 19, bigEndian: true, widthType: 4, heightType: 3)),
        ("ico", .ico, ico([(37, 19)])),
        ("webp lossy", .webp, webpLossy(width: 37, height: 19)),
        ("webp lossless", .webp, webpLossless(width: 37, height: 19)),
        ("webp extended", .webp, webpExtended(width: 37, height: 19)),
    ]
}

/// A small file written by a real encoder (Pillow 13, a 37 × 19 image), kept as base64.
private struct EncodedSample: Sendable {
    let name: String
    let format: ImageFormat
    let base64: String

    init(_ name: String, _ format: ImageFormat, _ lines: [String]) {
        self.name = name
        self.format = format
        self.base64 = lines.joined()
    }

    static let all: [EncodedSample] = [
        EncodedSample(
            "png", .png,
            [
                "iVBORw0KGgoAAAANSUhEUgAAACUAAAATCAIAAACY31PkAAAAJElEQVR4nGM8IafBQEfARE/LRu0btW/UvlH7Ru0b",
                "tW/UProAAGmrATTRnCR6AAAAAElFTkSuQmCC",
            ]
        ),
        EncodedSample(
            "jpeg", .jpeg,
            [
                "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAFA3PEY8MlBGQUZaVVBfeMiCeG5uePWvuZHI////////////////////",
                "////////////////////////////////wAALCAATACUBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcI",
                "CQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcY",
                "GRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKj",
                "pKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/AIqK",
                "KKKKKKKKKKKKK//Z",
            ]
        ),
        EncodedSample(
            "gif", .gif,
            [
                "R0lGODdhJQATAIEAAMgeKAAAAAAAAAAAACwAAAAAJQATAEAILAABCBxIsKDBgwgTKlzIsKHDhxAjSpxIsaLFixgz",
                "atzIsaPHjyBDihxJsmRAADs=",
            ]
        ),
        EncodedSample(
            "bmp", .bmp,
            [
                "Qk3WAAAAAAAAAD4AAAAoAAAAJQAAABMAAAABAAEAAAAAAJgAAADEDgAAxA4AAAIAAAACAAAAAAAAAP///wAhSSSE",
                "SAAAAEoSSSkQAAAAISUSQkAAAACUkKSUkAAAACJJCSJQAAAASSRSSQAAAAAkkoiSUAAAAJIpKSSIAAAAJIRCSSAA",
                "AABJKJSUkAAAACJFISEoAAAAlJJKSkAAAAAiSJEREAAAAEklJSUoAAAAJEhISEAAAACSkpKSkAAAACQkJCQgAAAA",
                "SUlJSUgAAAAiIiIiIAAAAA==",
            ]
        ),
        EncodedSample(
            "tiff", .tiff,
            [
                "SUkqAAgAAAAIAAABBAABAAAAJQAAAAEBBAABAAAAEwAAAAMBAwABAAAAAQAAAAYBAwABAAAAAQAAABEBBAABAAAA",
                "bgAAABYBBAABAAAAEwAAABcBBAABAAAAXwAAABwBAwABAAAAAQAAAAAAAAAiIiIiIElJSUlIJCQkJCCSkpKSkCRI",
                "SEhASSUlJSgiSJEREJSSSkpAIkUhIShJKJSUkCSEQkkgkikpJIgkkoiSUEkkUkkAIkkJIlCUkKSUkCElEkJAShJJ",
                "KRAhSSSESA==",
            ]
        ),
        EncodedSample(
            "webp lossy (VP8)", .webp,
            [
                "UklGRkgAAABXRUJQVlA4IDwAAAAwAwCdASolABMAPm02l0ikIyIhJWgAgA2JZwB2AABfF1UwAP7wG9//oUbKJin/",
                "/9pZ/9Sz/6ln+KgAAAA=",
            ]
        ),
        EncodedSample(
            "webp lossless (VP8L)", .webp,
            [
                "UklGRh4AAABXRUJQVlA4TBEAAAAvJIAEAAdQjyIXpf+BiOh/AAA="
            ]
        ),
        EncodedSample(
            "webp extended (VP8X)", .webp,
            [
                "UklGRmwAAABXRUJQVlA4WAoAAAAQAAAAJAAAEgAAQUxQSAoAAAABB1DAiAhERP8DVlA4IDwAAAAwAwCdASolABMA",
                "Pm02l0ikIyIhJWgAgA2JZwB2AABfF1UwAP7wG9//oUbKJin//9pZ/9Sz/6ln+KgAAAA=",
            ]
        ),
    ]
}

/// The error `ImageData(data:)` throws, or `nil` when it succeeds.
private func decodingError(_ data: Data) -> ImageDecodingError? {
    do {
        _ = try ImageData(data: data)
        return nil
    } catch {
        return error
    }
}

// MARK: - Formats

@Suite struct ImageFormatTests {
    @Test func mimeTypes() {
        let expected: [ImageFormat: String] = [
            .png: "image/png", .jpeg: "image/jpeg", .gif: "image/gif", .tiff: "image/tiff", .bmp: "image/bmp",
            .ico: "image/x-icon", .webp: "image/webp",
        ]
        #expect(ImageFormat.allCases.count == expected.count)
        for format in ImageFormat.allCases {
            #expect(format.mimeType == expected[format])
        }
    }

    @Test func detectsEveryFixture() {
        for fixture in Fixture.all {
            #expect(ImageFormat.detect(fixture.data) == fixture.format, "\(fixture.name)")
        }
    }

    @Test func detectsFromMagicBytesAlone() {
        #expect(ImageFormat.detect(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])) == .png)
        #expect(ImageFormat.detect(Data([0xFF, 0xD8, 0xFF])) == .jpeg)
        #expect(ImageFormat.detect(Data("GIF87a".utf8)) == .gif)
        #expect(ImageFormat.detect(Data("GIF89a".utf8)) == .gif)
        #expect(ImageFormat.detect(Data([0x49, 0x49, 0x2A, 0x00])) == .tiff)
        #expect(ImageFormat.detect(Data([0x4D, 0x4D, 0x00, 0x2A])) == .tiff)
        #expect(ImageFormat.detect(Data("BM".utf8)) == .bmp)
        #expect(ImageFormat.detect(Data([0x00, 0x00, 0x01, 0x00])) == .ico)
        #expect(ImageFormat.detect(Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBP".utf8)) == .webp)
    }

    @Test func rejectsNearMisses() {
        let nearMisses: [Data] = [
            Data(),
            Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A]),  // PNG signature cut short
            Data([0xFF, 0xD8]),
            Data([0xFF, 0xD8, 0x00]),
            Data("GIF88a".utf8),
            Data([0x49, 0x49, 0x00, 0x2A]),  // TIFF with mixed byte orders
            Data([0x4D, 0x4D, 0x2A, 0x00]),
            Data("B".utf8),
            Data("bm".utf8),
            Data([0x00, 0x00, 0x02, 0x00]),  // CUR, not ICO
            Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8),
            Data("RIFF\u{0}\u{0}\u{0}\u{0}WEB".utf8),
            Data("<html><body>Not found</body></html>".utf8),
        ]
        for data in nearMisses {
            #expect(ImageFormat.detect(data) == nil, "\(Array(data))")
            #expect(decodingError(data) == .unknownFormat, "\(Array(data))")
        }
    }

    @Test func detectsInSlices() {
        let padded = Data([0x42, 0x4D]) + Fixture.png(width: 1, height: 1)
        #expect(ImageFormat.detect(padded) == .bmp)
        #expect(ImageFormat.detect(padded.dropFirst(2)) == .png)
        #expect(ImageFormat.detect(padded.dropFirst(1)) == nil)
    }
}

// MARK: - Sizes

@Suite struct ImageTests {
    @Test(arguments: Fixture.all.map(\.name))
    func readsSizeOfEveryFixture(name: String) throws {
        let fixture = try #require(Fixture.all.first { $0.name == name })
        let image = try ImageData(data: fixture.data)
        #expect(image.format == fixture.format)
        #expect(image.pixelWidth == 37)
        #expect(image.pixelHeight == 19)
        #expect(image.data == fixture.data)
        #expect(image.scale == 1)
        #expect(image.width == 37)
        #expect(image.height == 19)
    }

    @Test(arguments: EncodedSample.all.map(\.name))
    func readsSizeOfEncoderOutput(name: String) throws {
        let sample = try #require(EncodedSample.all.first { $0.name == name })
        let data = try #require(Data(base64Encoded: sample.base64))
        let image = try ImageData(data: data)
        #expect(image.format == sample.format)
        #expect(image.pixelWidth == 37)
        #expect(image.pixelHeight == 19)
    }

    @Test func readsLargeAndExtremeSizes() throws {
        let cases: [(Data, Int, Int)] = [
            (Fixture.png(width: 1, height: 1), 1, 1),
            (Fixture.png(width: UInt32(Int32.max), height: 7), Int(Int32.max), 7),
            (Fixture.jpeg(width: 65535, height: 1), 65535, 1),
            (Fixture.gif(width: 65535, height: 65535), 65535, 65535),
            (Fixture.bmp(width: 100_000, height: Int32.min + 1), 100_000, Int(Int32.max)),
            (Fixture.bmpCore(width: 65535, height: 3), 65535, 3),
            (Fixture.tiff(width: 70_000, height: 5, widthType: 4), 70_000, 5),
            (Fixture.tiff(width: 65535, height: UInt32(Int32.max), bigEndian: true), 65535, Int(Int32.max)),
            (Fixture.ico([(0, 0)]), 256, 256),
            (Fixture.webpLossy(width: 16383, height: 1), 16383, 1),
            (Fixture.webpLossless(width: 16384, height: 16384), 16384, 16384),
            (Fixture.webpExtended(width: 1 << 24, height: 1), 1 << 24, 1),
        ]
        for (data, width, height) in cases {
            let image = try ImageData(data: data)
            #expect(image.pixelWidth == width, "\(image.format)")
            #expect(image.pixelHeight == height, "\(image.format)")
        }
    }

    @Test func readsASliceThatDoesNotStartAtZero() throws {
        for fixture in Fixture.all {
            let padded = Data(repeating: 0xFF, count: 3) + fixture.data + Data([0xAB, 0xCD])
            let slice = padded[3..<(3 + fixture.data.count)]
            #expect(slice.startIndex == 3)
            let image = try ImageData(data: slice)
            #expect(image.format == fixture.format, "\(fixture.name)")
            #expect(image.pixelWidth == 37, "\(fixture.name)")
            #expect(image.pixelHeight == 19, "\(fixture.name)")
            #expect(decodingError(slice.dropLast()) == .truncated(fixture.format), "\(fixture.name)")
        }
    }

    @Test func everyTruncationThrows() {
        var fixtures = Fixture.all
        fixtures.append(("jpeg with fill bytes", .jpeg, Fixture.jpeg(width: 3, height: 4, beforeFrame: [0xFF, 0xFF])))
        for fixture in fixtures {
            for length in 0..<fixture.data.count {
                let prefix = fixture.data.prefix(length)
                let expected: ImageDecodingError =
                    ImageFormat.detect(prefix) == nil ? .unknownFormat : .truncated(fixture.format)
                #expect(decodingError(prefix) == expected, "\(fixture.name) cut to \(length) bytes")
            }
        }
    }

    @Test func unknownFormatThrows() {
        #expect(throws: ImageDecodingError.unknownFormat) { try ImageData(data: Data()) }
        #expect(throws: ImageDecodingError.unknownFormat) { try ImageData(data: Data("{\"error\": true}".utf8)) }
        #expect(throws: ImageDecodingError.unknownFormat) { try ImageData(data: Data(repeating: 0, count: 64)) }
    }

    @Test func scaleDividesThePointSize() throws {
        let data = Fixture.png(width: 37, height: 19)
        let image = try ImageData(data: data, scale: 2)
        #expect(image.pixelWidth == 37)
        #expect(image.pixelHeight == 19)
        #expect(image.scale == 2)
        #expect(image.width == 18.5)
        #expect(image.height == 9.5)
        let triple = try ImageData(data: data, scale: 3)
        #expect(triple.width == 37.0 / 3)
    }

    @Test(arguments: [0, -2, Double.nan, Double.infinity, -Double.infinity])
    func unusableScaleFallsBackToOne(scale: Double) throws {
        let image = try ImageData(data: Fixture.gif(width: 37, height: 19), scale: scale)
        #expect(image.scale == 1)
        #expect(image.width == 37)
        #expect(image.height == 19)
    }

    @Test func equalityCoversBytesAndScale() throws {
        let data = Fixture.gif(width: 37, height: 19)
        let image = try ImageData(data: data)
        #expect(image == (try ImageData(data: data)))
        #expect(image.hashValue == (try ImageData(data: data)).hashValue)
        #expect(image != (try ImageData(data: data, scale: 2)))
        #expect(image != (try ImageData(data: data + Data([0x3B]))))
    }

    @Test func errorsDescribeThemselves() {
        #expect(ImageDecodingError.unknownFormat.description == "The data is not in a recognised image format.")
        #expect(ImageDecodingError.truncated(.webp).description == "The WEBP data ends before its headers do.")
        #expect(
            ImageDecodingError.malformed(.jpeg, "no frame header").description
                == "The JPEG data is malformed: no frame header.")
    }
}

// MARK: - Format details

@Suite struct ImageHeaderTests {
    @Test func pngRequiresIHDRFirstAndAPlausibleSize() {
        #expect(
            decodingError(Fixture.png(width: 37, height: 19, firstChunk: "IDAT"))
                == .malformed(.png, "IHDR is not the first chunk"))
        #expect(
            decodingError(Fixture.png(width: 37, height: 19, length: 12))
                == .malformed(.png, "the IHDR chunk is 12 bytes long, not 13"))
        #expect(decodingError(Fixture.png(width: 0, height: 19)) == .malformed(.png, "the size is 0×19"))
        #expect(decodingError(Fixture.png(width: 37, height: 0)) == .malformed(.png, "the size is 37×0"))
        #expect(
            decodingError(Fixture.png(width: 1 << 31, height: 1))
                == .malformed(.png, "the size 2147483648×1 is too large"))
        #expect(
            decodingError(Fixture.png(width: .max, height: .max))
                == .malformed(.png, "the size 4294967295×4294967295 is too large"))
    }

    @Test func jpegSkipsFillBytesAndSegmentsBeforeTheFrame() throws {
        let app1 = [0xFF, 0xE1] + Fixture.be16(2 + 10) + Fixture.ascii("Exif") + [0, 0, 0x49, 0x49, 0x2A, 0]
        let comment = [0xFF, 0xFE] + Fixture.be16(2 + 5) + Fixture.ascii("hello")
        // A huffman table whose payload looks like a frame header for 999 × 999: DHT (C4) must not count as SOF.
        let huffman: [UInt8] = [0xFF, 0xC4] + Fixture.be16(2 + 7) + [8, 0x03, 0xE7, 0x03, 0xE7, 3, 1]
        let emptyAPP2: [UInt8] = [0xFF, 0xE2, 0x00, 0x02]
        let standalone: [UInt8] = [0xFF, 0x01, 0xFF, 0xD0, 0xFF, 0xD7]
        let before = [0xFF, 0xFF, 0xFF] + app1 + [0xFF] + comment + huffman + emptyAPP2 + standalone + [0xFF, 0xFF]
        let image = try ImageData(data: Fixture.jpeg(width: 37, height: 19, beforeFrame: before))
        #expect(image.format == .jpeg)
        #expect(image.pixelWidth == 37)
        #expect(image.pixelHeight == 19)
    }

    @Test(arguments: [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF] as [UInt8])
    func jpegReadsEveryFrameType(marker: UInt8) throws {
        let image = try ImageData(data: Fixture.jpeg(width: 640, height: 480, frameMarker: marker))
        #expect(image.pixelWidth == 640)
        #expect(image.pixelHeight == 480)
    }

    @Test func jpegWithoutAFrameIsMalformed() {
        let scan: [UInt8] = [0xFF, 0xDA] + Fixture.be16(8) + [1, 1, 0, 0, 0x3F, 0]
        let noFrame: ImageDecodingError = .malformed(.jpeg, "no frame header")
        #expect(decodingError(Data([0xFF, 0xD8] + Fixture.app0 + scan)) == noFrame)
        #expect(decodingError(Data([0xFF, 0xD8] + Fixture.app0 + [0xFF, 0xD9])) == noFrame)
        #expect(decodingError(Data([0xFF, 0xD8, 0xFF, 0xD9])) == noFrame)
        #expect(decodingError(Fixture.jpeg(width: 37, height: 19, beforeFrame: scan)) == noFrame)
    }

    @Test func jpegRejectsBrokenSegments() {
        #expect(
            decodingError(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xC0]))
                == .malformed(.jpeg, "a segment length of 1"))
        #expect(
            decodingError(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00])) == .malformed(.jpeg, "a segment length of 0"))
        #expect(
            decodingError(Data([0xFF, 0xD8] + Fixture.app0 + [0x00, 0xFF, 0xC0]))
                == .malformed(.jpeg, "no marker at byte 20"))
        #expect(
            decodingError(Data([0xFF, 0xD8, 0xFF, 0x00, 0xFF, 0xC0]))
                == .malformed(.jpeg, "a stuffed 0xFF00 outside entropy-coded data at byte 2"))
        let shortFrame = Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x07, 8, 0, 1, 0, 1])
        #expect(decodingError(shortFrame) == .malformed(.jpeg, "a frame header only 7 bytes long"))
        #expect(decodingError(Fixture.jpeg(width: 0, height: 19)) == .malformed(.jpeg, "the size is 0×19"))
    }

    @Test func jpegMadeOfFillBytesEndsAsTruncated() {
        let data = Data([0xFF, 0xD8]) + Data(repeating: 0xFF, count: 200_000)
        #expect(decodingError(data) == .truncated(.jpeg))
        // A chain of empty segments runs off the end rather than looping.
        let emptySegments = Array(repeating: [0xFF, 0xE5, 0x00, 0x02] as [UInt8], count: 10_000).flatMap { $0 }
        let empties = Data([0xFF, 0xD8] + emptySegments + [0xFF, 0xE5, 0x00])
        #expect(decodingError(empties) == .truncated(.jpeg))
    }

    @Test func gifZeroSizeIsMalformed() {
        #expect(decodingError(Fixture.gif(width: 0, height: 5)) == .malformed(.gif, "the size is 0×5"))
    }

    @Test func bmpNegativeHeightMeansTopDown() throws {
        let image = try ImageData(data: Fixture.bmp(width: 37, height: -19))
        #expect(image.pixelWidth == 37)
        #expect(image.pixelHeight == 19)
        let tall = try ImageData(data: Fixture.bmp(width: 1, height: -2_000_000))
        #expect(tall.pixelHeight == 2_000_000)
    }

    @Test func bmpRejectsImpossibleHeaders() {
        #expect(decodingError(Fixture.bmp(width: 0, height: 19)) == .malformed(.bmp, "the size is 0×19"))
        #expect(decodingError(Fixture.bmp(width: 37, height: 0)) == .malformed(.bmp, "the size is 37×0"))
        #expect(decodingError(Fixture.bmp(width: -37, height: 19)) == .malformed(.bmp, "a negative width of -37"))
        #expect(
            decodingError(Fixture.bmp(width: 37, height: .min))
                == .malformed(.bmp, "the size 37×2147483648 is too large"))
        #expect(decodingError(Fixture.bmpCore(width: 0, height: 3)) == .malformed(.bmp, "the size is 0×3"))
        var badHeaderSize = Array(Fixture.bmp(width: 37, height: 19))
        badHeaderSize.replaceSubrange(14..<18, with: Fixture.le32(13))
        #expect(decodingError(Data(badHeaderSize)) == .malformed(.bmp, "a DIB header size of 13"))
        badHeaderSize.replaceSubrange(14..<18, with: Fixture.le32(.max))
        #expect(decodingError(Data(badHeaderSize)) == .truncated(.bmp))
    }

    @Test func tiffReadsBothByteOrdersAndTypes() throws {
        for bigEndian in [false, true] {
            for widthType in [3, 4] {
                for heightType in [3, 4] {
                    let data = Fixture.tiff(
                        width: 601, height: 402, bigEndian: bigEndian, widthType: widthType, heightType: heightType)
                    let image = try ImageData(data: data)
                    #expect(image.pixelWidth == 601)
                    #expect(image.pixelHeight == 402)
                }
            }
        }
    }

    @Test func tiffRejectsMissingOrOddTags() {
        func e(_ tag: Int, _ type: Int, _ value: UInt32) -> [UInt8] {
            Fixture.tiffEntry(tag: tag, type: type, value: value, bigEndian: false)
        }
        let missing: ImageDecodingError = .malformed(.tiff, "the first IFD has no ImageWidth or ImageLength")
        #expect(decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(256, 3, 5)])) == missing)
        #expect(decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(257, 3, 5)])) == missing)
        #expect(decodingError(Fixture.tiff(width: 1, height: 1, entries: [])) == missing)
        #expect(
            decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(256, 1, 5), e(257, 3, 5)]))
                == .malformed(.tiff, "tag 256 has type 1, not SHORT or LONG"))
        let twoValues = Fixture.tiffEntry(tag: 257, type: 3, value: 5, bigEndian: false, count: 2)
        #expect(
            decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(256, 3, 5), twoValues]))
                == .malformed(.tiff, "tag 257 has 2 values, not 1"))
        #expect(
            decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(256, 3, 0), e(257, 3, 5)]))
                == .malformed(.tiff, "the size is 0×5"))
        #expect(
            decodingError(Fixture.tiff(width: 1, height: 1, entries: [e(256, 3, 5), e(257, 4, 1 << 31)]))
                == .malformed(.tiff, "the size 5×2147483648 is too large"))
        // The first value of a repeated tag wins.
        let repeated = Fixture.tiff(width: 1, height: 1, entries: [e(256, 3, 5), e(257, 4, 6), e(256, 3, 7)])
        #expect((try? ImageData(data: repeated))?.pixelWidth == 5)
    }

    @Test func tiffRejectsBadOffsets() {
        var data = Array(Fixture.tiff(width: 37, height: 19))
        data.replaceSubrange(4..<8, with: Fixture.le32(4))
        #expect(decodingError(Data(data)) == .malformed(.tiff, "the first IFD offset 4 is inside the header"))
        data.replaceSubrange(4..<8, with: Fixture.le32(.max))
        #expect(decodingError(Data(data)) == .truncated(.tiff))
        data.replaceSubrange(4..<8, with: Fixture.le32(8))
        data.replaceSubrange(8..<10, with: Fixture.le16(0xFFFF))  // 65535 entries claimed, 10 present
        #expect(decodingError(Data(data)) == .truncated(.tiff))
    }

    @Test func icoZeroMeans256() throws {
        let image = try ImageData(data: Fixture.ico([(0, 0)]))
        #expect(image.pixelWidth == 256)
        #expect(image.pixelHeight == 256)
        let wide = try ImageData(data: Fixture.ico([(0, 48)]))
        #expect(wide.pixelWidth == 256)
        #expect(wide.pixelHeight == 48)
    }

    @Test func icoPicksTheLargestEntryPresent() throws {
        let icon = Fixture.ico([(16, 16), (0, 0), (48, 48), (32, 32)])
        let largest = try ImageData(data: icon)
        #expect(largest.pixelWidth == 256)
        #expect(largest.pixelHeight == 256)
        // With the data cut inside the second entry, only the first is considered.
        let cut = try ImageData(data: icon.prefix(6 + 16 + 15))
        #expect(cut.pixelWidth == 16)
        // Entries the count claims but the data lacks are ignored.
        let overclaimed = try ImageData(data: Fixture.ico([(20, 10), (10, 30)], declared: 60000))
        #expect(overclaimed.pixelWidth == 10)
        #expect(overclaimed.pixelHeight == 30)
        // Entries past the declared count are ignored.
        let underclaimed = try ImageData(data: Fixture.ico([(20, 10), (0, 0)], declared: 1))
        #expect(underclaimed.pixelWidth == 20)
        // Equal areas: the first wins.
        let tie = try ImageData(data: Fixture.ico([(8, 32), (32, 8)]))
        #expect(tie.pixelWidth == 8)
    }

    @Test func icoWithNoEntriesIsMalformed() {
        #expect(decodingError(Fixture.ico([(16, 16)], declared: 0)) == .malformed(.ico, "the directory is empty"))
    }

    @Test func webpIgnoresTheBitsBesideTheSize() throws {
        // The two scaling bits above each 14-bit lossy size are not part of it…
        let scaled = try ImageData(data: Fixture.webpLossy(width: 0xC000 | 37, height: 0x4000 | 19))
        #expect(scaled.pixelWidth == 37)
        #expect(scaled.pixelHeight == 19)
        // …nor is the alpha bit above the lossless height.
        let alpha = try ImageData(data: Fixture.webpLossless(width: 37, height: 19, alpha: true))
        #expect(alpha.pixelWidth == 37)
        #expect(alpha.pixelHeight == 19)
    }

    @Test func webpRejectsBrokenChunks() {
        #expect(
            decodingError(Fixture.webpLossy(width: 37, height: 19, startCode: [0x9D, 0x01, 0x2B]))
                == .malformed(.webp, "the VP8 start code is missing"))
        #expect(decodingError(Fixture.webpLossy(width: 0, height: 19)) == .malformed(.webp, "the size is 0×19"))
        var lossless = Array(Fixture.webpLossless(width: 37, height: 19))
        lossless[20] = 0x2E
        #expect(decodingError(Data(lossless)) == .malformed(.webp, "the VP8L signature is missing"))
        #expect(
            decodingError(Fixture.webpLossless(width: 37, height: 19, version: 1))
                == .malformed(.webp, "VP8L version 1"))
        #expect(
            decodingError(Fixture.webp("ALPH", [UInt8](repeating: 0, count: 20)))
                == .malformed(.webp, "the first chunk is not VP8, VP8L or VP8X"))
    }
}

// MARK: - Hostile input

/// `async`, yielding between cases, so these CPU-bound loops share the cooperative pool (see ``FuzzTests``).
@Suite(.cpuBound) struct ImageFuzzTests {
    /// Checks what any input may produce: a plausible image in the detected format, or the matching error.
    private func checkOutcome(_ data: Data) {
        let format = ImageFormat.detect(data)
        do {
            let image = try ImageData(data: data)
            #expect(image.format == format)
            #expect(image.pixelWidth >= 1 && image.pixelWidth <= Int(Int32.max))
            #expect(image.pixelHeight >= 1 && image.pixelHeight <= Int(Int32.max))
        } catch {
            switch error {
            case .unknownFormat: #expect(format == nil)
            case .truncated(let failed), .malformed(let failed, _): #expect(failed == format && format != nil)
            }
        }
    }

    @Test func randomBytesNeverCrash() async {
        var generator = SeededGenerator(seed: 0xC0FF_EE)
        for _ in 0..<4000 {
            await Task.yield()
            let count = Int.random(in: 0..<64, using: &generator)
            checkOutcome(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
    }

    @Test func randomBodiesAfterEverySignatureNeverCrash() async {
        var generator = SeededGenerator(seed: 42)
        let signatures: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Fixture.ascii("IHDR"),
            [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xFF], Fixture.ascii("GIF89a"), [0x49, 0x49, 0x2A, 0x00],
            [0x4D, 0x4D, 0x00, 0x2A], Fixture.ascii("BM"), [0x00, 0x00, 0x01, 0x00],
            Fixture.ascii("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 "), Fixture.ascii("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8L"),
            Fixture.ascii("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8X"),
        ]
        var decoded = 0
        for signature in signatures {
            for _ in 0..<500 {
                await Task.yield()
                let count = Int.random(in: 0..<96, using: &generator)
                let data = Data(signature + (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
                #expect(ImageFormat.detect(data) != nil)
                checkOutcome(data)
                if (try? ImageData(data: data)) != nil { decoded += 1 }
            }
        }
        #expect(decoded > 0)  // Some random headers are valid, so the parsers were reached, not just detection.
    }

    @Test func mutatedFixturesNeverCrash() async {
        var generator = SeededGenerator(seed: 7)
        for fixture in Fixture.all {
            for _ in 0..<300 {
                await Task.yield()
                var bytes = Array(fixture.data)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                let cut = Int.random(in: 0...bytes.count, using: &generator)
                checkOutcome(Data(bytes.prefix(cut)))
                checkOutcome(Data(bytes))
            }
        }
    }
}
