import Courier
import Foundation

#if os(Linux)
    import CCourierImageCodecs
#elseif canImport(ImageIO)
    import CoreGraphics
    import ImageIO
#endif

/// Decodes PNG and JPEG to pixels with the platform's libraries: libpng and libjpeg(-turbo) on Linux, ImageIO on
/// Apple platforms (where every format ImageIO reads is decoded).
///
/// ```swift
/// let downloader = ImageDownloader(decoder: SystemImageDecoder())
/// let image = try await downloader.image(for: request)
/// print(image.bitmap?[0, 0] ?? [])  // [r, g, b, a]; nil for a format the platform cannot decode
/// ```
///
/// On Linux, PNG of every colour type and bit depth (interlaced or not) and JPEG (baseline or progressive; grey,
/// YCbCr, CMYK) become RGBA8, alpha not premultiplied; 16-bit samples are rounded to 8 bits, no gamma is applied.
/// A format the platform cannot decode (GIF, WebP… on Linux) gives the image with its size and no pixels.
///
/// A corrupt or truncated file is a thrown ``CourierError/responseSerializationFailed(reason:context:underlyingError:)``
/// (code -1016) with the bytes attached and an ``ImageCodecError`` underneath, never a crash or a partial image:
/// libjpeg's handler that calls `exit()` is replaced, and its warnings about corrupt data are errors. An image of
/// more than ``maximumPixelCount`` pixels is refused before any memory is allocated for it.
public struct SystemImageDecoder: ImageDecoding {
    /// The most pixels an image may have; default 64 Mi (256 MiB decoded).
    public var maximumPixelCount: Int
    /// Whether a decoded image keeps its encoded bytes (``Courier/Image/data``) beside its pixels; default `false`:
    /// the bytes are dropped, so a cached image costs what ``Courier/Image/cost`` says and no more.
    public var keepsEncodedBytes: Bool

    /// A decoder.
    public init(maximumPixelCount: Int = 64 * 1024 * 1024, keepsEncodedBytes: Bool = false) {
        self.maximumPixelCount = max(1, maximumPixelCount)
        self.keepsEncodedBytes = keepsEncodedBytes
    }

    /// Decodes `imageData` to pixels where the platform can.
    public func decode(_ imageData: ImageData) throws -> Image {
        let (area, overflow) = imageData.pixelWidth.multipliedReportingOverflow(by: imageData.pixelHeight)
        guard !overflow, area <= maximumPixelCount else {
            throw failure(
                imageData,
                .tooLarge(width: imageData.pixelWidth, height: imageData.pixelHeight, limit: maximumPixelCount))
        }
        do {
            guard let bitmap = try Self.bitmap(of: imageData, limit: maximumPixelCount) else {
                return Image(imageData: imageData)
            }
            guard bitmap.width == imageData.pixelWidth, bitmap.height == imageData.pixelHeight else {
                throw ImageCodecError.corrupt(
                    imageData.format,
                    "the headers say \(imageData.pixelWidth)×\(imageData.pixelHeight), the pixels are "
                        + "\(bitmap.width)×\(bitmap.height)")
            }
            return Image(imageData: keepsEncodedBytes ? imageData : imageData.withoutEncodedBytes(), bitmap: bitmap)
        } catch let error as ImageCodecError {
            throw failure(imageData, error)
        }
    }

    private func failure(_ imageData: ImageData, _ error: ImageCodecError) -> CourierError {
        .responseSerializationFailed(
            reason: "The image could not be decoded: \(error)", context: .init(data: imageData.data),
            underlyingError: error)
    }

    #if os(Linux)
        private typealias Codec = (
            UnsafePointer<UInt8>?, Int, UInt64, UnsafeMutablePointer<courier_image_result>?
        ) -> Int32

        /// The pixels, or `nil` for a format this platform does not decode.
        private static func bitmap(of imageData: ImageData, limit: Int) throws -> Bitmap? {
            let codec: Codec
            switch imageData.format {
            case .png: codec = courier_png_decode
            case .jpeg: codec = courier_jpeg_decode
            default: return nil
            }
            var result = courier_image_result()
            let status = imageData.data.withUnsafeBytes { bytes in
                codec(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, UInt64(limit), &result)
            }
            guard status == 0, let pixels = result.pixels else {
                let message = withUnsafeBytes(of: &result.message) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                throw ImageCodecError.corrupt(imageData.format, message)
            }
            defer { courier_image_free(pixels) }
            let width = Int(result.width)
            let height = Int(result.height)
            let buffer = UnsafeBufferPointer(start: pixels, count: width * height * 4)
            guard let bitmap = Bitmap(width: width, height: height, pixels: Array(buffer)) else {
                throw ImageCodecError.corrupt(imageData.format, "the decoder returned an impossible size")
            }
            return bitmap
        }
    #elseif canImport(ImageIO)
        /// The pixels ImageIO decodes, drawn into an RGBA8 context and un-premultiplied.
        private static func bitmap(of imageData: ImageData, limit: Int) throws -> Bitmap? {
            guard let source = CGImageSourceCreateWithData(imageData.data as CFData, nil),
                let image = CGImageSourceCreateImageAtIndex(source, 0, nil)
            else {
                throw ImageCodecError.corrupt(imageData.format, "ImageIO could not read it")
            }
            let width = image.width
            let height = image.height
            guard width > 0, height > 0, width * height <= limit else {
                throw ImageCodecError.tooLarge(width: width, height: height, limit: limit)
            }
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            let drawn = pixels.withUnsafeMutableBytes { buffer -> Bool in
                guard
                    let context = CGContext(
                        data: buffer.baseAddress, width: width, height: height, bitsPerComponent: 8,
                        bytesPerRow: width * 4, space: CGColorSpaceCreateDeviceRGB(),
                        bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue)
                else { return false }
                context.draw(image, in: CGRect(x: 0, y: 0, width: width, height: height))
                return true
            }
            guard drawn else { throw ImageCodecError.corrupt(imageData.format, "no bitmap context") }
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = Int(pixels[index + 3])
                guard alpha > 0, alpha < 255 else { continue }
                for channel in 0..<3 {
                    pixels[index + channel] = UInt8(min(255, (Int(pixels[index + channel]) * 255 + alpha / 2) / alpha))
                }
            }
            return Bitmap(width: width, height: height, pixels: pixels)
        }
    #else
        private static func bitmap(of imageData: ImageData, limit: Int) throws -> Bitmap? { nil }
    #endif
}

/// Why ``SystemImageDecoder`` could not decode an image.
public enum ImageCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The image has more pixels than the decoder allows.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// The platform's decoder refused the data; the string is its message.
    case corrupt(ImageFormat, String)

    /// A sentence describing the error.
    public var description: String {
        switch self {
        case .tooLarge(let width, let height, let limit):
            "the image is \(width)×\(height) pixels, more than the \(limit) allowed"
        case .corrupt(let format, let message):
            "the \(format.rawValue.uppercased()) data is corrupt: \(message)"
        }
    }
}
