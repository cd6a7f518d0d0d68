import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and reads its body as an ``ImageData`` (`AFImageResponseSerializer`).
///
/// The format comes from the magic bytes, not the header, and the pixel size from the format's header; nothing is
/// decompressed. An empty body gives `nil`; bytes in no known format, or with a broken header, are an error with
/// code -1016 (AFNetworking returned a silent `nil`).
public struct ImageResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default AFNetworking's image types plus `image/webp`.
    public var acceptableContentTypes: Set<String>?
    /// The scale images are created with (2 for `@2x` assets); default 1.
    public var imageScale: Double

    /// The MIME types images are served as.
    public static let imageContentTypes: Set<String> = [
        "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp", "image/x-bmp",
        "image/x-xbitmap", "image/x-win-bitmap", "image/webp",
    ]

    /// Creates a serializer.
    public init(
        imageScale: Double = 1,
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = imageContentTypes
    ) {
        self.imageScale = imageScale
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and reads the image.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> ImageData? {
        try validateAndParse(
            head: head, data: data, failureReason: "The data is not an image in a known format."
        ) { try ImageData(data: $0, scale: imageScale) }
    }
}

extension ImageResponseSerializer: HeadSerializing {}
