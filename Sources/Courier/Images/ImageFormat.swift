import Foundation

/// The image file formats Courier recognises, identified by the magic bytes at the start of a file.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// Portable Network Graphics.
    case png
    /// JPEG (JFIF, Exif and raw JPEG streams).
    case jpeg
    /// Graphics Interchange Format, 87a or 89a.
    case gif
    /// Tagged Image File Format, little- or big-endian.
    case tiff
    /// Windows bitmap.
    case bmp
    /// Windows icon.
    case ico
    /// WebP (lossy, lossless or extended).
    case webp

    /// The format's MIME type, e.g. `image/png`.
    public var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .gif: "image/gif"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"
        case .webp: "image/webp"
        }
    }

    /// Identifies the format of `data` from its magic bytes alone; `nil` when no known signature matches.
    ///
    /// Only the signature is checked: a file with the right signature and a broken body is still detected.
    public static func detect(_ data: Data) -> ImageFormat? {
        func hasBytes(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            guard data.count >= offset + bytes.count else { return false }
            let start = data.startIndex + offset
            return data[start..<start + bytes.count].elementsEqual(bytes)
        }
        if hasBytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if hasBytes([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if hasBytes(Array("GIF87a".utf8)) || hasBytes(Array("GIF89a".utf8)) { return .gif }
        if hasBytes([0x49, 0x49, 0x2A, 0x00]) || hasBytes([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if hasBytes(Array("RIFF".utf8)) && hasBytes(Array("WEBP".utf8), at: 8) { return .webp }
        if hasBytes([0x00, 0x00, 0x01, 0x00]) { return .ico }
        if hasBytes(Array("BM".utf8)) { return .bmp }
        return nil
    }
}
