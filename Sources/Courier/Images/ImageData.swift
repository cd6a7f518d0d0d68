import Foundation

#if canImport(UIKit)
    import UIKit
#elseif canImport(AppKit)
    import AppKit
#endif

/// A downloaded image: its encoded bytes, the format they are in, and its size.
///
/// There is no `UIImage` on Linux, so this is what ``ImageResponseSerializer`` produces everywhere. Creating one
/// reads only the file's headers — enough to know the format and the pixel size — and keeps the bytes as they came;
/// `platformImage` turns it into a `UIImage` or `NSImage` where those exist.
public struct ImageData: Sendable, Hashable {
    /// The encoded image, exactly as received.
    public let data: Data
    /// The format detected from the data's magic bytes.
    public let format: ImageFormat
    /// The width in pixels, read from the headers; always at least 1.
    public let pixelWidth: Int
    /// The height in pixels, read from the headers; always at least 1.
    public let pixelHeight: Int
    /// The number of pixels per point along each axis, e.g. 2 for an `@2x` image; always positive and finite.
    public let scale: Double

    /// The width in points: ``pixelWidth`` divided by ``scale``.
    public var width: Double { Double(pixelWidth) / scale }
    /// The height in points: ``pixelHeight`` divided by ``scale``.
    public var height: Double { Double(pixelHeight) / scale }

    /// Detects the format of `data` and reads its pixel size from the headers.
    ///
    /// Only the headers are read and checked; the pixel data is not decoded, so a file whose headers are intact but
    /// whose body is corrupt is still accepted.
    ///
    /// - Parameters:
    ///   - data: The encoded image. It may be a slice of a larger `Data`.
    ///   - scale: Pixels per point. A scale that is not positive and finite is treated as 1.
    /// - Throws: ``ImageDecodingError/unknownFormat`` when no known signature matches,
    ///   ``ImageDecodingError/truncated(_:)`` when the data ends inside the headers, and
    ///   ``ImageDecodingError/malformed(_:_:)`` when the headers are inconsistent or the size is zero or too large.
    public init(data: Data, scale: Double = 1) throws(ImageDecodingError) {
        guard let format = ImageFormat.detect(data) else { throw .unknownFormat }
        let reader = ByteReader(data: data, format: format)
        let size: PixelSize
        switch format {
        case .png: size = try HeaderParser.png(reader)
        case .jpeg: size = try HeaderParser.jpeg(reader)
        case .gif: size = try HeaderParser.gif(reader)
        case .tiff: size = try HeaderParser.tiff(reader)
        case .bmp: size = try HeaderParser.bmp(reader)
        case .ico: size = try HeaderParser.ico(reader)
        case .webp: size = try HeaderParser.webp(reader)
        }
        self.data = data
        self.format = format
        self.pixelWidth = size.width
        self.pixelHeight = size.height
        self.scale = scale.isFinite && scale > 0 ? scale : 1
    }
}

extension ImageData {
    /// The same format, pixel size and scale without the encoded bytes (``data`` is empty): what an image decoded
    /// to pixels keeps, so that holding it costs its pixels alone, as a decoded `UIImage` does.
    public func withoutEncodedBytes() -> ImageData {
        ImageData(data: Data(), format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
    }

    private init(data: Data, format: ImageFormat, pixelWidth: Int, pixelHeight: Int, scale: Double) {
        self.data = data
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
    }
}

/// Why bytes could not be read as an ``ImageData``.
public enum ImageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data does not start with the signature of any ``ImageFormat``.
    case unknownFormat
    /// The data has the format's signature but ends before the headers that hold the size do.
    case truncated(ImageFormat)
    /// The format's headers are inconsistent, or give a size of zero or more than `Int32.max`; the string says how.
    case malformed(ImageFormat, String)

    /// A sentence describing the error.
    public var description: String {
        switch self {
        case .unknownFormat:
            "The data is not in a recognised image format."
        case .truncated(let format):
            "The \(format.rawValue.uppercased()) data ends before its headers do."
        case .malformed(let format, let reason):
            "The \(format.rawValue.uppercased()) data is malformed: \(reason)."
        }
    }
}

#if canImport(UIKit)
    extension ImageData {
        /// The image decoded by UIKit at ``scale``, or `nil` when UIKit cannot decode it.
        public var platformImage: UIImage? { UIImage(data: data, scale: CGFloat(scale)) }
    }
#elseif canImport(AppKit)
    extension ImageData {
        /// The image decoded by AppKit, sized in points (pixels divided by ``scale``), or `nil` when AppKit cannot
        /// decode it.
        public var platformImage: NSImage? {
            guard let image = NSImage(data: data) else { return nil }
            image.size = NSSize(width: CGFloat(width), height: CGFloat(height))
            return image
        }
    }
#endif

/// A width and height in pixels, both in `1...Int32.max`.
private struct PixelSize {
    let width: Int
    let height: Int

    /// Checks a size read from a header: zero, negative or over `Int32.max` is malformed.
    init(width: some BinaryInteger, height: some BinaryInteger, format: ImageFormat) throws(ImageDecodingError) {
        guard width > 0, height > 0 else {
            throw .malformed(format, "the size is \(width)×\(height)")
        }
        guard width <= Int32.max, height <= Int32.max, let width = Int(exactly: width),
            let height = Int(exactly: height)
        else {
            throw .malformed(format, "the size \(width)×\(height) is too large")
        }
        self.width = width
        self.height = height
    }
}

/// Bounds-checked reads at offsets counted from the start of `data`, which may be a slice not starting at index 0.
///
/// Every read past the end throws ``ImageDecodingError/truncated(_:)``; no read traps or allocates more than four
/// bytes.
private struct ByteReader {
    let data: Data
    let format: ImageFormat

    /// The number of bytes.
    var count: Int { data.count }

    /// Throws unless the `length` bytes at `offset` all lie within the data.
    func require(_ length: Int, at offset: Int) throws(ImageDecodingError) {
        guard offset >= 0, length >= 0, length <= data.count, offset <= data.count - length else {
            throw .truncated(format)
        }
    }

    /// The `length` bytes at `offset`, sharing the data's storage.
    func bytes(at offset: Int, count length: Int) throws(ImageDecodingError) -> Data {
        try require(length, at: offset)
        let start = data.startIndex + offset
        return data[start..<start + length]
    }

    /// Whether the bytes at `offset` are `expected`.
    func matches(_ expected: [UInt8], at offset: Int) throws(ImageDecodingError) -> Bool {
        try bytes(at: offset, count: expected.count).elementsEqual(expected)
    }

    /// Whether the bytes at `offset` are the ASCII characters of `expected`.
    func matches(_ expected: String, at offset: Int) throws(ImageDecodingError) -> Bool {
        try matches(Array(expected.utf8), at: offset)
    }

    /// The byte at `offset`.
    func u8(at offset: Int) throws(ImageDecodingError) -> UInt8 {
        UInt8(truncatingIfNeeded: try uint(at: offset, width: 1, bigEndian: false))
    }

    /// The unsigned integer of `width` (at most 4) bytes at `offset`.
    func uint(at offset: Int, width: Int, bigEndian: Bool) throws(ImageDecodingError) -> UInt32 {
        let raw = try bytes(at: offset, count: width)
        let ordered = bigEndian ? Array(raw) : raw.reversed()
        return ordered.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The 16-bit unsigned integer at `offset`.
    func u16(at offset: Int, bigEndian: Bool) throws(ImageDecodingError) -> Int {
        Int(try uint(at: offset, width: 2, bigEndian: bigEndian))
    }

    /// The 32-bit unsigned integer at `offset`.
    func u32(at offset: Int, bigEndian: Bool) throws(ImageDecodingError) -> UInt32 {
        try uint(at: offset, width: 4, bigEndian: bigEndian)
    }
}

/// Reads the pixel size from each format's headers. Each parser is called only once `detect` has matched the
/// format's signature.
private enum HeaderParser {
    /// PNG: the IHDR chunk must come first and be whole (length 13, plus its CRC, which is not checked).
    static func png(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        guard try reader.matches("IHDR", at: 12) else { throw .malformed(.png, "IHDR is not the first chunk") }
        let length = try reader.u32(at: 8, bigEndian: true)
        guard length == 13 else { throw .malformed(.png, "the IHDR chunk is \(length) bytes long, not 13") }
        try reader.require(4 + 4 + 13 + 4, at: 8)
        return try PixelSize(
            width: reader.u32(at: 16, bigEndian: true), height: reader.u32(at: 20, bigEndian: true), format: .png)
    }

    /// GIF: the logical screen descriptor that follows the 6-byte signature must be whole (7 bytes).
    static func gif(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        try reader.require(7, at: 6)
        return try PixelSize(
            width: reader.u16(at: 6, bigEndian: false), height: reader.u16(at: 8, bigEndian: false), format: .gif)
    }

    /// The start-of-frame markers, whose segments hold the frame's size (not DHT C4, JPG C8 or DAC CC).
    private static let startOfFrameMarkers: Set<UInt8> = [
        0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF,
    ]

    /// JPEG: walks the marker segments after SOI up to the first start-of-frame segment, which must be whole.
    ///
    /// Each step moves forward by at least one byte, so the walk ends at the end of the data at the latest.
    static func jpeg(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        var offset = 2
        while true {
            guard try reader.u8(at: offset) == 0xFF else {
                throw .malformed(.jpeg, "no marker at byte \(offset)")
            }
            var marker: UInt8 = 0xFF
            while marker == 0xFF {  // Any number of 0xFF fill bytes may precede a marker.
                offset += 1
                marker = try reader.u8(at: offset)
            }
            switch marker {
            case 0xD9, 0xDA:
                throw .malformed(.jpeg, "no frame header")
            case 0x01, 0xD0...0xD8:
                offset += 1
                continue
            case 0x00:
                throw .malformed(.jpeg, "a stuffed 0xFF00 outside entropy-coded data at byte \(offset - 1)")
            default:
                break
            }
            let length = try reader.u16(at: offset + 1, bigEndian: true)
            guard length >= 2 else { throw .malformed(.jpeg, "a segment length of \(length)") }
            if startOfFrameMarkers.contains(marker) {
                // Length (2), precision (1), height (2), width (2), component count (1), then the components.
                guard length >= 8 else { throw .malformed(.jpeg, "a frame header only \(length) bytes long") }
                try reader.require(length, at: offset + 1)
                return try PixelSize(
                    width: reader.u16(at: offset + 6, bigEndian: true),
                    height: reader.u16(at: offset + 4, bigEndian: true),
                    format: .jpeg
                )
            }
            offset += 1 + length
        }
    }

    /// BMP: the DIB header, whose size is at byte 14, must be whole. A negative height marks a top-down bitmap.
    static func bmp(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        let headerSize = try reader.u32(at: 14, bigEndian: false)
        guard headerSize == 12 || headerSize >= 16 else {
            throw .malformed(.bmp, "a DIB header size of \(headerSize)")
        }
        guard let length = Int(exactly: headerSize) else { throw .truncated(.bmp) }
        try reader.require(length, at: 14)
        if headerSize == 12 {  // BITMAPCOREHEADER: unsigned 16-bit width and height.
            return try PixelSize(
                width: reader.u16(at: 18, bigEndian: false), height: reader.u16(at: 20, bigEndian: false), format: .bmp)
        }
        let width = Int32(bitPattern: try reader.u32(at: 18, bigEndian: false))
        let height = Int32(bitPattern: try reader.u32(at: 22, bigEndian: false))
        guard width >= 0 else { throw .malformed(.bmp, "a negative width of \(width)") }
        return try PixelSize(width: width, height: height.magnitude, format: .bmp)
    }

    /// TIFF: the first IFD must be whole and hold ImageWidth (256) and ImageLength (257) as one SHORT or LONG each.
    static func tiff(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        let bigEndian = try reader.matches("MM", at: 0)
        let firstIFD = try reader.u32(at: 4, bigEndian: bigEndian)
        guard firstIFD >= 8 else { throw .malformed(.tiff, "the first IFD offset \(firstIFD) is inside the header") }
        guard let ifd = Int(exactly: firstIFD) else { throw .truncated(.tiff) }
        let entryCount = try reader.u16(at: ifd, bigEndian: bigEndian)
        try reader.require(2 + 12 * entryCount + 4, at: ifd)  // Count, entries, next IFD's offset.
        var width: UInt32?
        var height: UInt32?
        for index in 0..<entryCount {
            let entry = ifd + 2 + 12 * index
            let tag = try reader.u16(at: entry, bigEndian: bigEndian)
            guard tag == 256 || tag == 257 else { continue }
            let type = try reader.u16(at: entry + 2, bigEndian: bigEndian)
            let valueCount = try reader.u32(at: entry + 4, bigEndian: bigEndian)
            guard valueCount == 1 else { throw .malformed(.tiff, "tag \(tag) has \(valueCount) values, not 1") }
            let value: UInt32
            switch type {
            case 3: value = UInt32(try reader.u16(at: entry + 8, bigEndian: bigEndian))
            case 4: value = try reader.u32(at: entry + 8, bigEndian: bigEndian)
            default: throw .malformed(.tiff, "tag \(tag) has type \(type), not SHORT or LONG")
            }
            if tag == 256 {
                width = width ?? value
            } else {
                height = height ?? value
            }
        }
        guard let width, let height else { throw .malformed(.tiff, "the first IFD has no ImageWidth or ImageLength") }
        return try PixelSize(width: width, height: height, format: .tiff)
    }

    /// ICO: the largest image by area among the 16-byte directory entries that lie within the data, of which the
    /// first must. A width or height byte of 0 means 256.
    static func ico(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        let declared = try reader.u16(at: 4, bigEndian: false)
        guard declared >= 1 else { throw .malformed(.ico, "the directory is empty") }
        try reader.require(16, at: 6)
        let present = min(declared, (reader.count - 6) / 16)
        var largest: (width: Int, height: Int) = (0, 0)
        for index in 0..<present {
            let entry = 6 + 16 * index
            let width = try reader.u8(at: entry)
            let height = try reader.u8(at: entry + 1)
            let size = (width: width == 0 ? 256 : Int(width), height: height == 0 ? 256 : Int(height))
            if size.width * size.height > largest.width * largest.height { largest = size }
        }
        return try PixelSize(width: largest.width, height: largest.height, format: .ico)
    }

    /// WebP: the size is in the first chunk, at byte 12, which is `VP8 ` (lossy), `VP8L` (lossless) or `VP8X`
    /// (extended, holding the canvas size).
    static func webp(_ reader: ByteReader) throws(ImageDecodingError) -> PixelSize {
        if try reader.matches("VP8 ", at: 12) {
            // Chunk size (4), frame tag (3), start code (3), then 14-bit width and height with 2 scaling bits each.
            try reader.require(14, at: 16)
            guard try reader.matches([0x9D, 0x01, 0x2A], at: 23) else {
                throw .malformed(.webp, "the VP8 start code is missing")
            }
            return try PixelSize(
                width: reader.u16(at: 26, bigEndian: false) & 0x3FFF,
                height: reader.u16(at: 28, bigEndian: false) & 0x3FFF,
                format: .webp
            )
        }
        if try reader.matches("VP8L", at: 12) {
            // Chunk size (4), signature 0x2F, then 14 bits of width - 1, 14 of height - 1, alpha, 3 of version.
            try reader.require(9, at: 16)
            guard try reader.u8(at: 20) == 0x2F else { throw .malformed(.webp, "the VP8L signature is missing") }
            let bits = try reader.u32(at: 21, bigEndian: false)
            guard bits >> 29 == 0 else { throw .malformed(.webp, "VP8L version \(bits >> 29)") }
            return try PixelSize(width: (bits & 0x3FFF) + 1, height: (bits >> 14 & 0x3FFF) + 1, format: .webp)
        }
        if try reader.matches("VP8X", at: 12) {
            // Chunk size (4), flags (1), reserved (3), then 24-bit canvas width - 1 and height - 1.
            try reader.require(14, at: 16)
            return try PixelSize(
                width: reader.uint(at: 24, width: 3, bigEndian: false) + 1,
                height: reader.uint(at: 27, width: 3, bigEndian: false) + 1,
                format: .webp
            )
        }
        throw .malformed(.webp, "the first chunk is not VP8, VP8L or VP8X")
    }
}
