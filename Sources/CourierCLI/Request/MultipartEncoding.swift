import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns fields and files into a multipart request: the only place `courier` (and `courier demo`) encode
/// multipart form data.
enum MultipartEncoding {
    /// Whether ``encode(_:fields:files:)`` can encode; `courier demo` skips its multipart step otherwise.
    // Lead: set to true when MultipartFormData is plugged in below.
    static let isAvailable = false

    /// `request` with a `multipart/form-data` content type and the body that goes with it, streamed from the files.
    ///
    /// - Throws: ``CommandFailure`` naming the file that cannot be read.
    static func encode(
        _ request: URLRequest, fields: [(name: String, value: String)], files: [FileField]
    ) throws -> (URLRequest, RequestBody) {
        for file in files where !FileManager.default.isReadableFile(atPath: file.path) {
            throw CommandFailure(.failure, "\(file.name)@\(file.path): the file does not exist or cannot be read")
        }
        // Lead: plug in MultipartFormData here:
        //   var form = MultipartFormData()
        //   for field in fields { form.append(Data(field.value.utf8), name: field.name) }
        //   for file in files { try form.append(fileURL: URL(fileURLWithPath: file.path), name: file.name, …mimeType) }
        //   var request = request; request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        //   return (request, form.makeBody())
        // The runner already sends a RequestBody through an upload task with a progress bar, and --offline prints it.
        throw CommandFailure(
            .failure,
            "multipart form data (name@path items, --multipart) is not available yet: this build of Courier has no "
                + "MultipartFormData")
    }
}
