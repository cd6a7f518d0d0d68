import Foundation

/// A `multipart/form-data` body, streamed part by part (`AFStreamingMultipartFormData`).
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(Data("Bang".utf8), name: "name")
/// try form.append(fileURL: photoURL, name: "photo")  // image/png, file name from the URL
/// let body = form.makeBody()  // length known, nothing read yet
/// ```
///
/// The layout is AFNetworking's, byte for byte: the first part starts `--B\r\n`, every later one `\r\n--B\r\n`;
/// a part is its header lines, a blank line and its body; the form ends `\r\n--B--\r\n`. A form field has only a
/// `Content-Disposition: form-data; name="…"` header; a file part adds `; filename="…"` and a `Content-Type` line.
/// Names are written as given (brackets, spaces and UTF-8 included), as AFNetworking does; only `"`, CR and LF,
/// which would break the header, are escaped as browsers escape them (`%22`, `%0D`, `%0A`).
///
/// ``contentLength`` is known before anything is read: file parts record the file's size when they are appended,
/// and stream parts declare theirs. The body made by ``makeBody()`` reads files and streams only as the transport
/// pulls, in chunks of at most ``chunkSize`` bytes, so a form costs the same memory whatever its files weigh. It can
/// be made again from the start (for a 307 redirect or an authentication retry) unless a part comes from a
/// one-shot async sequence.
///
/// A file that is missing, or whose size changed since it was appended, fails the upload before the first byte is
/// sent; one that changes while it is being sent fails it as soon as the change is seen. Nothing is padded or
/// truncated.
public struct MultipartFormData: Sendable {
    /// AFNetworking's suggested packet size for slow (3G) networks: 16 KiB (`kAFUploadStream3GSuggestedPacketSize`).
    public static let suggestedPacketSize3G = 16_384
    /// AFNetworking's suggested delay between packets on slow (3G) networks: 0.2 s (`kAFUploadStream3GSuggestedDelay`).
    public static let suggestedDelay3G: TimeInterval = 0.2

    /// The boundary, e.g. `Boundary+DEADBEEFCAFEBABE`.
    public let boundary: String

    /// The most bytes read from a file or handed to the transport at once; default 256 KiB.
    public var chunkSize: Int = 256 * 1024

    /// The most bytes per chunk set by ``throttle(packetSize:delay:)``, or `nil` when not throttled.
    public private(set) var packetSize: Int?

    /// The pause after each chunk set by ``throttle(packetSize:delay:)``, in seconds; 0 when not throttled.
    public private(set) var delay: TimeInterval = 0

    private var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - Parameter boundary: the boundary; a random ``randomBoundary()`` by default. Tests inject a fixed one for
    ///   byte-exact bodies.
    public init(boundary: String = MultipartFormData.randomBoundary()) {
        self.boundary = boundary
    }

    /// `Boundary+` and 16 random upper-case hex digits, as AFNetworking makes them.
    public static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        return randomBoundary(using: &generator)
    }

    /// `Boundary+` and 16 upper-case hex digits drawn from `generator`.
    public static func randomBoundary(using generator: inout some RandomNumberGenerator) -> String {
        let high = UInt32.random(in: .min ... .max, using: &generator)
        let low = UInt32.random(in: .min ... .max, using: &generator)
        return "Boundary+" + hex8(high) + hex8(low)
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    // MARK: What the form is

    /// `multipart/form-data; boundary=<boundary>`: the request's `Content-Type`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body's exact length in bytes, computed without reading any file or stream; 0 for a form with no parts.
    public var contentLength: Int64 {
        guard !parts.isEmpty else { return 0 }
        var total = Int64(closingDelimiter.count)
        for (index, part) in parts.enumerated() {
            // A part's declared length is the caller's: saturate rather than trap; sending then fails cleanly.
            let head = Int64(head(of: part, isFirst: index == 0).count)
            total = CheckedConversion.sum(total, CheckedConversion.sum(head, part.length) ?? .max) ?? .max
        }
        return total
    }

    /// The number of parts.
    public var count: Int { parts.count }

    /// Whether the form has no parts.
    public var isEmpty: Bool { parts.isEmpty }

    /// Whether the body can be sent more than once: `false` when a part comes from a one-shot async sequence.
    public var isReplayable: Bool { parts.allSatisfy(\.isReplayable) }

    // MARK: Appending parts

    /// Appends a form field: `data` under `name`, with only a `Content-Disposition` header
    /// (`appendPartWithFormData:name:`).
    public mutating func append(_ data: Data, name: String) {
        append(headers: Self.headers(name: name, fileName: nil, mimeType: nil), body: data)
    }

    /// Appends a file part from memory (`appendPartWithFileData:name:fileName:mimeType:`).
    public mutating func append(_ data: Data, name: String, fileName: String, mimeType: String) {
        append(headers: Self.headers(name: name, fileName: fileName, mimeType: mimeType), body: data)
    }

    /// Appends a file part named after the file, with the MIME type of its extension (``MIMEType``)
    /// (`appendPartWithFileURL:name:error:`).
    ///
    /// The file's size is read now; its contents only when the body is sent.
    ///
    /// - Throws: ``CourierError/multipartEncodingFailed(reason:fileURL:underlyingError:)`` (code -1000) with
    ///   `Expected URL to be a file URL` for a URL that is not a file URL, and `File URL not reachable.` for a file
    ///   that is missing, unreadable or not a regular file.
    public mutating func append(fileURL: URL, name: String) throws {
        try append(
            fileURL: fileURL, name: name, fileName: fileURL.lastPathComponent,
            mimeType: MIMEType.mimeType(for: fileURL))
    }

    /// Appends a file part with an explicit file name and MIME type
    /// (`appendPartWithFileURL:name:fileName:mimeType:error:`).
    ///
    /// - Throws: as ``append(fileURL:name:)``.
    public mutating func append(fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        let length = try Self.fileLength(of: fileURL)
        parts.append(
            Part(
                headers: Self.headers(name: name, fileName: fileName, mimeType: mimeType), length: length,
                source: .file(fileURL)))
    }

    /// Appends a file part whose bytes come from a one-shot async sequence of chunks, with its length declared up
    /// front (`appendPartWithInputStream:name:fileName:length:mimeType:`).
    ///
    /// The form is then no longer replayable (see ``isReplayable``): a redirect that must resend the body is not
    /// followed. Use ``append(length:name:fileName:mimeType:makeStream:)`` to keep it replayable.
    /// A sequence that ends early or runs past `length` fails the upload with
    /// ``CourierError/multipartEncodingFailed(reason:fileURL:underlyingError:)``.
    public mutating func append<Bytes: AsyncSequence & Sendable>(
        _ stream: Bytes, length: Int64, name: String, fileName: String, mimeType: String
    ) where Bytes.Element: DataProtocol {
        appendStream(
            length: length, headers: Self.headers(name: name, fileName: fileName, mimeType: mimeType),
            isReplayable: false
        ) { DataChunks(stream, transform: Self.data) }
    }

    /// Appends a file part from a one-shot async sequence of single bytes, such as `FileHandle.bytes`; bytes are
    /// gathered into chunks of up to ``chunkSize``. See the chunk form for the rules.
    public mutating func append<Bytes: AsyncSequence & Sendable>(
        _ stream: Bytes, length: Int64, name: String, fileName: String, mimeType: String
    ) where Bytes.Element == UInt8 {
        append(
            ByteBatches(bytes: stream, size: chunkSize), length: length, name: name, fileName: fileName,
            mimeType: mimeType)
    }

    /// Appends a file part whose bytes come from an async sequence that `makeStream` makes afresh each time the body
    /// is sent, so the form stays replayable.
    public mutating func append<Bytes: AsyncSequence & Sendable>(
        length: Int64, name: String, fileName: String, mimeType: String,
        makeStream: @escaping @Sendable () -> Bytes
    ) where Bytes.Element: DataProtocol {
        appendStream(
            length: length, headers: Self.headers(name: name, fileName: fileName, mimeType: mimeType),
            isReplayable: true
        ) { DataChunks(makeStream(), transform: Self.data) }
    }

    /// The chunk as `Data`, without copying when it already is.
    @Sendable private static func data<Bytes: DataProtocol>(_ bytes: Bytes) -> Data {
        (bytes as? Data) ?? Data(bytes)
    }

    /// Appends a part with arbitrary header fields, written in order (`appendPartWithHeaders:body:`).
    public mutating func append(headers: HTTPHeaderFields, body: Data) {
        parts.append(Part(headers: headers, length: Int64(body.count), source: .data(body)))
    }

    /// Appends a part with arbitrary header fields and any body of known length: a file, a stream, or data.
    ///
    /// - Throws: ``CourierError/multipartEncodingFailed(reason:fileURL:underlyingError:)`` when the body's length is
    ///   unknown, since the form's `Content-Length` must be computed up front.
    public mutating func append(headers: HTTPHeaderFields, body: HTTPRequestBody) throws {
        if let data = body.data {
            append(headers: headers, body: data)
            return
        }
        guard let length = body.length else {
            throw CourierError.multipartEncodingFailed(
                reason: "A multipart part needs a body of known length.", fileURL: nil, underlyingError: nil)
        }
        appendStream(length: length, headers: headers, isReplayable: body.isReplayable) { try body.makeChunks() }
    }

    private mutating func appendStream(
        length: Int64, headers: HTTPHeaderFields, isReplayable: Bool,
        makeChunks: @escaping @Sendable () throws -> DataChunks
    ) {
        var part = Part(headers: headers, length: max(0, length), source: .data(Data()))
        if isReplayable {
            part.source = .stream(isReplayable: true, makeChunks: makeChunks)
        } else {
            // A one-shot sequence iterated a second time would send whatever is left of it: refuse instead.
            let used = Locked(false)
            let name = part.name
            part.source = .stream(isReplayable: false) {
                let wasUsed = used.withLock { used in
                    defer { used = true }
                    return used
                }
                if wasUsed {
                    throw CourierError.multipartEncodingFailed(
                        reason: "The stream of the part “\(name)” can be sent only once.", fileURL: nil,
                        underlyingError: nil)
                }
                return try makeChunks()
            }
        }
        parts.append(part)
    }

    /// Limits each chunk of the body to `packetSize` bytes and pauses `delay` seconds after each one
    /// (`throttleBandwidthWithPacketSize:delay:`), for networks that drop connections when a large body is sent
    /// at full speed. The defaults are AFNetworking's 3G suggestions.
    public mutating func throttle(
        packetSize: Int = MultipartFormData.suggestedPacketSize3G,
        delay: TimeInterval = MultipartFormData.suggestedDelay3G
    ) {
        self.packetSize = max(1, packetSize)
        self.delay = max(0, delay)
    }

    // MARK: Producing the body

    /// The body as a ``HTTPRequestBody`` of length ``contentLength``: from memory when every part is in memory and the
    /// form is not throttled, streamed otherwise.
    public func makeBody() -> HTTPRequestBody {
        let segments = makeSegments()
        if packetSize == nil, delay == 0, contentLength <= Self.inMemoryLimit {
            let inMemory = segments.compactMap { segment -> Data? in
                if case .bytes(let data) = segment { return data }
                return nil
            }
            if inMemory.count == segments.count { return .data(inMemory.reduce(into: Data(), { $0.append($1) })) }
        }
        let plan = StreamPlan(
            segments: segments, files: parts.compactMap(\.fileCheck),
            chunkSize: max(1, min(chunkSize, packetSize ?? .max)), delay: delay)
        return HTTPRequestBody(length: contentLength, isReplayable: isReplayable) {
            DataChunks(makeNext: {
                let stream = MultipartStream(plan: plan)
                return { try await stream.next() }
            })
        }
    }

    /// The whole encoded body in memory, for small forms and tests. Large forms should be streamed with
    /// ``makeBody()`` or written with ``writeEncodedData(to:)``.
    public func encode() async throws -> Data {
        var data = Data()
        data.reserveCapacity(Int(clamping: contentLength))
        for try await chunk in try makeBody().makeChunks() { data.append(chunk) }
        return data
    }

    /// Writes the encoded body to a file, chunk by chunk in constant memory, replacing the file if it exists; a
    /// partly written file is removed when this fails. For servers that need a plain upload of known length
    /// (AFNetworking's `requestWithMultipartFormRequest:writingStreamContentsToFile:`).
    ///
    /// - Throws: what reading the parts throws, or ``CourierError/fileOperationFailed(reason:underlyingError:context:)``
    ///   when the file cannot be written.
    public func writeEncodedData(to fileURL: URL) async throws {
        try await MultipartRequest.write(makeBody(), to: fileURL)
    }

    // MARK: Layout

    /// The largest form sent from one contiguous buffer rather than streamed (all of its parts in memory).
    static let inMemoryLimit: Int64 = 1 << 20

    /// The largest in-memory part copied next to its delimiters; larger ones are sent from their own buffer.
    static let copiedPartLimit = 64 * 1024

    private var closingDelimiter: Data { Data("\r\n--\(boundary)--\r\n".utf8) }

    private func head(of part: Part, isFirst: Bool) -> Data {
        var text = isFirst ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
        for field in part.headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    private static func headers(name: String, fileName: String?, mimeType: String?) -> HTTPHeaderFields {
        var headers = HTTPHeaderFields()
        let name = quotable(name)
        if let fileName {
            headers["Content-Disposition"] = "form-data; name=\"\(name)\"; filename=\"\(quotable(fileName))\""
        } else {
            headers["Content-Disposition"] = "form-data; name=\"\(name)\""
        }
        if let mimeType { headers["Content-Type"] = mimeType }
        return headers
    }

    /// A name or file name as it goes between quotes. AFNetworking writes names as they are; the three characters
    /// that would end the quoted string or the header line (and let a name inject headers or parts) are escaped
    /// the way browsers escape them (HTML's multipart/form-data encoding): `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func quotable(_ name: String) -> String {
        guard name.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return name }
        var result = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The body as runs of in-memory bytes (delimiters, headers and data parts merged) and streamed parts.
    private func makeSegments() -> [Segment] {
        guard !parts.isEmpty else { return [] }
        var segments: [Segment] = []
        var pending = Data()
        for (index, part) in parts.enumerated() {
            pending.append(head(of: part, isFirst: index == 0))
            switch part.source {
            case .data(let data) where data.count > Self.copiedPartLimit:
                // Referenced, not copied: a large in-memory part is sent from the caller's own buffer.
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.bytes(data))
            case .data(let data):
                pending.append(data)
            case .file(let url):
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.file(url, length: part.length))
            case .stream(_, let makeChunks):
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.stream(makeChunks, length: part.length, name: part.name))
            }
        }
        pending.append(closingDelimiter)
        segments.append(.bytes(pending))
        return segments.filter {
            if case .bytes(let data) = $0 { return !data.isEmpty }
            return true
        }
    }

    /// The size of a readable regular file, or the AFNetworking error for it.
    static func fileLength(of url: URL) throws -> Int64 {
        guard url.isFileURL else {
            throw CourierError.multipartEncodingFailed(
                reason: "Expected URL to be a file URL", fileURL: url, underlyingError: nil)
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        } catch {
            throw CourierError.multipartEncodingFailed(
                reason: "File URL not reachable.", fileURL: url, underlyingError: error)
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular,
            FileManager.default.isReadableFile(atPath: url.path),
            let size = attributes[.size] as? NSNumber
        else {
            throw CourierError.multipartEncodingFailed(
                reason: "File URL not reachable.", fileURL: url, underlyingError: nil)
        }
        return size.int64Value
    }
}

extension MultipartFormData {
    /// One part: its header fields and where its body comes from.
    struct Part: Sendable {
        var headers: HTTPHeaderFields
        var length: Int64
        var source: Source

        enum Source: Sendable {
            case data(Data)
            case file(URL)
            case stream(isReplayable: Bool, makeChunks: @Sendable () throws -> DataChunks)
        }

        var isReplayable: Bool {
            if case .stream(let isReplayable, _) = source { return isReplayable }
            return true
        }

        var fileCheck: FileCheck? {
            if case .file(let url) = source { return FileCheck(url: url, length: length) }
            return nil
        }

        /// The `name` of the Content-Disposition, for error messages.
        var name: String {
            let disposition = headers["Content-Disposition"] ?? ""
            guard let start = disposition.range(of: "name=\"") else { return disposition }
            let rest = disposition[start.upperBound...]
            return String(rest.prefix { $0 != "\"" })
        }
    }
}
