import Foundation

/// An image as the downloader and the cache hold it: the encoded bytes with their format and pixel size
/// (``ImageData``), and the pixels once a decoder has produced them.
///
/// The core library reads only headers (``ImageHeaderDecoder``), so ``bitmap`` is `nil` unless a pixel decoder
/// is in use, such as `SystemImageDecoder` of the `CourierImageDecoding` product.
public struct Image: Sendable, Hashable {
    /// The encoded image, its format, pixel size and scale.
    public let imageData: ImageData
    /// The decoded pixels, when a decoder produced them.
    public let bitmap: Bitmap?

    /// An image; `bitmap`, when given, must have the size `imageData` reports.
    public init(imageData: ImageData, bitmap: Bitmap? = nil) {
        self.imageData = imageData
        self.bitmap = bitmap
    }

    /// The width in pixels.
    public var pixelWidth: Int { imageData.pixelWidth }
    /// The height in pixels.
    public var pixelHeight: Int { imageData.pixelHeight }
    /// The encoded bytes, as received; empty when the decoder dropped them once it had the pixels (as
    /// `SystemImageDecoder` does unless told to keep them).
    public var data: Data { imageData.data }
    /// The format the bytes are in.
    public var format: ImageFormat { imageData.format }

    /// What holding the image decoded costs: width × height × 4 bytes (AFNetworking's measure), whether or not
    /// ``bitmap`` is there. Saturates at `UInt64.max` rather than overflowing for absurd header sizes.
    public var cost: UInt64 {
        let (pixels, overflow) = UInt64(pixelWidth).multipliedReportingOverflow(by: UInt64(pixelHeight))
        let (bytes, overflowAgain) = pixels.multipliedReportingOverflow(by: 4)
        return overflow || overflowAgain ? .max : bytes
    }
}

/// Decoded pixels: 8-bit red, green, blue and alpha per pixel, alpha not premultiplied, rows top to bottom with no
/// padding.
public struct Bitmap: Sendable, Hashable {
    /// The width in pixels, at least 1.
    public let width: Int
    /// The height in pixels, at least 1.
    public let height: Int
    /// `width × height × 4` bytes: R, G, B, A of each pixel, row after row.
    public let pixels: [UInt8]

    /// A bitmap, or `nil` when `pixels` does not hold exactly `width × height × 4` bytes.
    public init?(width: Int, height: Int, pixels: [UInt8]) {
        guard width > 0, height > 0 else { return nil }
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        let (count, overflowAgain) = area.multipliedReportingOverflow(by: 4)
        guard !overflow, !overflowAgain, pixels.count == count else { return nil }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The R, G, B, A bytes of the pixel at column `x` and row `y` (counted from the top left).
    ///
    /// - Precondition: `0 <= x < width` and `0 <= y < height`.
    public subscript(x: Int, y: Int) -> [UInt8] {
        precondition((0..<width).contains(x) && (0..<height).contains(y), "pixel (\(x), \(y)) is outside the bitmap")
        let start = (y * width + x) * 4
        return Array(pixels[start..<start + 4])
    }
}
