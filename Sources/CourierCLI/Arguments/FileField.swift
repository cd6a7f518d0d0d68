/// A `name@path` item: a file sent as a part of a multipart body.
struct FileField: Sendable, Hashable {
    /// The form field's name.
    var name: String
    /// The file to send.
    var path: String
    /// The part's type from `;type=`, or `nil` to guess it from the file name.
    var mimeType: String?
}
