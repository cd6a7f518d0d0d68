import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a cancelled download needs to continue where it stopped: the resource, the partial file and the
/// resource's validator.
///
/// ``DownloadTask/cancel(producingResumeData:)`` produces it (encoded as ``encoded()``), and
/// ``SessionManager/downloadTask(withResumeData:progress:destination:options:completionHandler:)`` continues the
/// download with `Range: bytes=<bytesOnDisk>-` and `If-Range: <validator>`. The server answers `206` and the
/// rest is appended; a server that answers `200` (it ignores ranges, or the validator changed) restarts the file
/// from zero, so the result is never a mix of two versions.
///
/// The partial file belongs to the resume data: a task made from it continues it and deletes it when done. If you
/// drop resume data, delete ``temporaryFileURL`` yourself.
///
/// Resume data is only produced when the response carries a strong validator (`ETag` that is not weak, or
/// `Last-Modified`), as URLSession does: without one a changed resource could not be detected.
public struct DownloadResumeData: Codable, Sendable, Hashable {
    /// The URL of the resource (after redirects).
    public var url: URL
    /// The request's header fields, without `Range` and `If-Range`.
    public var headers: [String: String]
    /// The partial file. Only a regular file in the private directory where Courier keeps its temporary files is
    /// continued; resume data naming any other file starts the download over in a new file and leaves that file
    /// alone (resume data is only bytes, and must not be able to truncate and append to any file it names).
    public var temporaryFileURL: URL
    /// How many bytes of the resource the partial file holds.
    public var bytesOnDisk: Int64
    /// The resource's `ETag`, when it is strong.
    public var entityTag: String?
    /// The resource's `Last-Modified`.
    public var lastModified: String?

    /// Creates resume data.
    public init(
        url: URL, headers: [String: String] = [:], temporaryFileURL: URL, bytesOnDisk: Int64, entityTag: String?,
        lastModified: String?
    ) {
        self.url = url
        self.headers = headers
        self.temporaryFileURL = temporaryFileURL
        self.bytesOnDisk = bytesOnDisk
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Decodes resume data made by ``encoded()``.
    ///
    /// - Throws: ``CourierError/fileOperationFailed(reason:underlyingError:context:)`` when `data` is not resume
    ///   data.
    public init(data: Data) throws {
        do {
            self = try JSONDecoder().decode(DownloadResumeData.self, from: data)
        } catch {
            throw CourierError.fileOperationFailed(
                reason: "The resume data is not valid: \(error)", underlyingError: error,
                context: CourierError.Context())
        }
        guard bytesOnDisk >= 0, temporaryFileURL.isFileURL else {
            throw CourierError.fileOperationFailed(
                reason: "The resume data is not valid: it names no partial file.", underlyingError: nil,
                context: CourierError.Context())
        }
    }

    /// The resume data as bytes, to keep until the download continues.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The `If-Range` value: the strong entity tag, else the modification date.
    var validator: String? { entityTag ?? lastModified }

    /// Resume data for a partial download, or `nil` when the response has no strong validator.
    static func make(
        request: URLRequest?, response: HTTPURLResponse?, file: URL, bytesOnDisk: Int64
    ) -> DownloadResumeData? {
        guard let response, let url = response.url ?? request?.url,
            response.statusCode == 200 || response.statusCode == 206
        else { return nil }
        let entityTag = response.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        guard entityTag != nil || lastModified != nil else { return nil }
        var headers = request?.allHTTPHeaderFields ?? [:]
        for name in headers.keys where ["range", "if-range"].contains(name.lowercased()) {
            headers[name] = nil
        }
        return DownloadResumeData(
            url: url, headers: headers, temporaryFileURL: file, bytesOnDisk: bytesOnDisk, entityTag: entityTag,
            lastModified: lastModified)
    }

    /// The request that continues the download.
    func makeRequest() -> URLRequest {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if bytesOnDisk > 0, let validator {
            request.setValue("bytes=\(bytesOnDisk)-", forHTTPHeaderField: "Range")
            request.setValue(validator, forHTTPHeaderField: "If-Range")
        }
        return request
    }
}

/// What to do with the partial file when the answer to a resumed download's request arrives.
enum ResumeDecision: Equatable {
    /// `206` for exactly the missing bytes: append them.
    case append
    /// Anything else the server sends in full (`200`: it ignores ranges, or `If-Range` did not match; an error
    /// status): start the file over with this body.
    case restart
    /// `416`: the partial file does not fit the resource; request the whole resource.
    case retryWholeResource

    init(response: HTTPURLResponse, offset: Int64) {
        switch response.statusCode {
        case 206:
            // `Content-Range: bytes <first>-<last>/<length>`: only the range that starts where the file ends fits.
            let range = response.value(forHTTPHeaderField: "Content-Range") ?? ""
            let first = range.split(separator: " ").last?.split(separator: "-").first.flatMap { Int64($0) }
            self = first == offset ? .append : .retryWholeResource
        case 416:
            self = .retryWholeResource
        default:
            self = .restart
        }
    }
}
