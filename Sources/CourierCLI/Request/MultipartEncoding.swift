import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns fields and files into a multipart request with Courier's ``MultipartFormData``: the only place `courier`
/// (and `courier demo`) encode multipart form data.
enum MultipartEncoding {
    /// A `multipart/form-data` request built by `serializer`, and its body, streamed from the files when sent. Fields
    /// come first in the order given, then the files; a file's type is its `;type=`, else guessed from its name.
    ///
    /// - Throws: ``CommandFailure`` naming the file that cannot be read, or the method that cannot carry a form.
    static func encode(
        serializer: HTTPRequestSerializer, method: String, url: URL, fields: [(name: String, value: String)],
        files: [FileField]
    ) throws -> (URLRequest, HTTPRequestBody) {
        do {
            let multipart = try serializer.multipartRequest(method: method, url: url) { form in
                for field in fields { form.append(Data(field.value.utf8), name: field.name) }
                for file in files {
                    let fileURL = URL(fileURLWithPath: file.path)
                    try form.append(
                        fileURL: fileURL, name: file.name, fileName: fileURL.lastPathComponent,
                        mimeType: file.mimeType ?? MIMEType.mimeType(for: fileURL))
                }
            }
            return (multipart.urlRequest, multipart.body)
        } catch let error as CourierError {
            guard case .multipartEncodingFailed(let reason, let fileURL, _) = error else { throw error }
            let file = fileURL.map { "\($0.path): " } ?? ""
            throw CommandFailure(.failure, "multipart form data: \(file)\(reason)")
        }
    }
}
