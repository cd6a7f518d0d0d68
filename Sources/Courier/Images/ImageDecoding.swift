import Foundation

/// Turns downloaded bytes into an ``Image``.
///
/// The ``ImageDownloader`` calls its decoder on a bounded queue of its own, never on a network thread or a
/// thread of Swift concurrency; a decoder may block while it works. A decoder must throw, not trap, on any input.
public protocol ImageDecoding: Sendable {
    /// Decodes `imageData`, whose format and size the headers have already given.
    ///
    /// - Throws: any error; the downloader reports it as ``CourierError/responseSerializationFailed(reason:context:underlyingError:)``
    ///   (code -1016) with the request, response and bytes attached.
    func decode(_ imageData: ImageData) throws -> Image
}

/// The core library's decoder: the headers give the format and the pixel size, and no pixels are decoded (the
/// image's ``Image/bitmap`` is `nil`). Use `SystemImageDecoder` from `CourierImageDecoding` for pixels.
public struct ImageHeaderDecoder: ImageDecoding {
    /// A decoder.
    public init() {}

    /// The image with no pixels.
    public func decode(_ imageData: ImageData) throws -> Image {
        Image(imageData: imageData)
    }
}
