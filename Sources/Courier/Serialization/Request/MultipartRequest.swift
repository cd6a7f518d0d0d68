import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A multipart request: the request head and its streamed body, which a `URLRequest` alone cannot carry
/// (its `httpBodyStream` can be read only once, so it could not be resent after a redirect).
///
/// Send it with ``SessionManager/uploadTask(with:progress:completionHandler:)``, or write the body to a file with
/// ``writingBody(to:)`` for a server that needs a plain file upload.
public struct MultipartRequest: Sendable {
    /// The request, with `Content-Type: multipart/form-data; boundary=…` and `Content-Length`, and no `httpBody`.
    public var urlRequest: URLRequest
    /// The body, streamed from the parts as it is sent; replayable unless a part is a one-shot stream.
    public var body: HTTPRequestBody

    /// Creates a multipart request from its parts.
    public init(urlRequest: URLRequest, body: HTTPRequestBody) {
        self.urlRequest = urlRequest
        self.body = body
    }

    /// Writes the encoded body to `fileURL` in constant memory (replacing the file if it exists) and returns the
    /// request to upload it with, e.g. with ``SessionManager/uploadTask(with:fromFile:progress:completionHandler:)``
    /// (AFNetworking's `requestWithMultipartFormRequest:writingStreamContentsToFile:completionHandler:`).
    ///
    /// A partly written file is removed when writing fails.
    ///
    /// - Throws: what reading the parts throws, or ``CourierError/fileOperationFailed(reason:underlyingError:context:)``
    ///   when the file cannot be written.
    public func writingBody(to fileURL: URL) async throws -> URLRequest {
        try await Self.write(body, to: fileURL)
        return urlRequest
    }

    /// Writes a body to a file chunk by chunk, removing the file if that fails.
    static func write(_ body: HTTPRequestBody, to fileURL: URL) async throws {
        guard fileURL.isFileURL else {
            throw CourierError.multipartEncodingFailed(
                reason: "Expected URL to be a file URL", fileURL: fileURL, underlyingError: nil)
        }
        let handle: FileHandle
        do {
            guard FileManager.default.createFile(atPath: fileURL.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fileURL.path])
            }
            handle = try FileHandle(forWritingTo: fileURL)
        } catch {
            throw Self.writeError(fileURL, error)
        }
        do {
            defer { try? handle.close() }
            try await body.write(to: handle)
        } catch {
            try? FileManager.default.removeItem(at: fileURL)
            switch error {
            case HTTPRequestBody.WriteFailure.reading(let underlying): throw underlying
            case HTTPRequestBody.WriteFailure.writing(let underlying): throw Self.writeError(fileURL, underlying)
            default: throw error
            }
        }
    }

    static func writeError(_ url: URL, _ error: any Error) -> CourierError {
        .fileOperationFailed(
            reason: "The multipart body could not be written to \(url.path).", underlyingError: error,
            context: CourierError.Context())
    }
}
