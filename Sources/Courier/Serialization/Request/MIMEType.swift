import Foundation

/// MIME types for file extensions, as multipart file parts need them.
///
/// AFNetworking asks Apple's type system (`UTType.preferredMIMEType`); Linux has no such system, and Debian's
/// `/etc/mime.types` disagrees with Apple on common types (it maps `.cer` to `application/pkix-cert`). So Courier
/// ships its own table with Apple's answers for common extensions, and behaves the same on every platform.
public enum MIMEType {
    /// The type for unknown extensions.
    public static let fallback = "application/octet-stream"

    /// The MIME type for a file extension (without the dot, any case), or ``fallback`` when it is unknown.
    ///
    /// `mimeType(forPathExtension: "cer")` is `application/x-x509-ca-cert`, `"PNG"` gives `image/png`.
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        table[pathExtension.lowercased()] ?? fallback
    }

    /// The MIME type for a file URL's extension, or ``fallback``.
    public static func mimeType(for fileURL: URL) -> String {
        mimeType(forPathExtension: fileURL.pathExtension)
    }

    /// Apple's preferred MIME type (`UTType(filenameExtension:)?.preferredMIMEType`) for common extensions.
    static let table: [String: String] = [
        // Text and data
        "txt": "text/plain", "text": "text/plain",
        "html": "text/html", "htm": "text/html",
        "css": "text/css",
        "csv": "text/csv",
        "js": "text/javascript", "mjs": "text/javascript",
        "json": "application/json",
        "xml": "application/xml",
        "rtf": "text/rtf",
        "md": "text/markdown", "markdown": "text/markdown",
        "yaml": "application/x-yaml", "yml": "application/x-yaml",
        "vcf": "text/vcard",
        "ics": "text/calendar",
        // Images
        "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg",
        "gif": "image/gif",
        "tif": "image/tiff", "tiff": "image/tiff",
        "bmp": "image/bmp",
        "ico": "image/vnd.microsoft.icon",
        "svg": "image/svg+xml",
        "webp": "image/webp",
        "heic": "image/heic",
        "heif": "image/heif",
        // Documents and archives
        "pdf": "application/pdf",
        "zip": "application/zip",
        "gz": "application/x-gzip", "gzip": "application/x-gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        // Audio and video
        "mp3": "audio/mpeg",
        "m4a": "audio/mp4",
        "aac": "audio/aac",
        "wav": "audio/vnd.wave",
        "mp4": "video/mp4", "m4v": "video/x-m4v",
        "mov": "video/quicktime", "qt": "video/quicktime",
        "mpg": "video/mpeg", "mpeg": "video/mpeg",
        "avi": "video/avi",
        // Certificates and keys
        "cer": "application/x-x509-ca-cert", "crt": "application/x-x509-ca-cert", "der": "application/x-x509-ca-cert",
        "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
    ]
}
