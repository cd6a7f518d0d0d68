import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and decodes its body as text.
///
/// The encoding is ``encoding`` when set, else the response's `charset`, else UTF-8. An empty body is `""`. Bytes
/// that are not valid in the encoding are an error (code -1016), never a silently mangled string.
public struct StringResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `nil`, which accepts any.
    public var acceptableContentTypes: Set<String>?
    /// The encoding to use regardless of the response's charset; default `nil`.
    public var encoding: String.Encoding?

    /// Creates a serializer.
    public init(
        encoding: String.Encoding? = nil,
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = nil
    ) {
        self.encoding = encoding
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and decodes the body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> String {
        let encoding =
            encoding ?? head?.value(forHTTPHeaderField: "Content-Type").flatMap(ContentType.init)?.charset
            .flatMap(StringResponseSerializer.encoding(forCharset:)) ?? .utf8
        let text = try validateAndParse(head: head, data: data, failureReason: unreadableDataReason) { data in
            guard let text = String(data: data, encoding: encoding) else { throw TextDecodingError(encoding: encoding) }
            return text
        }
        if let text { return text }
        if let data, !data.isEmpty { return String(decoding: data, as: UTF8.self) }
        return ""
    }

    /// The encoding for an IANA charset name, for the common ones; `nil` for others.
    public static func encoding(forCharset charset: String) -> String.Encoding? {
        String.Encoding(ianaCharsetName: charset)
    }
}

/// The body's bytes are not valid text in the encoding.
public struct TextDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoding the body was read with.
    public var encoding: String.Encoding

    /// E.g. `The data is not valid Unicode (UTF-8) text.`
    public var description: String { "The data is not valid \(encoding) text." }
}

extension StringResponseSerializer: HeadSerializing {}
