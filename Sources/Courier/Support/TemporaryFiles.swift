import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where Courier keeps its temporary files (downloads in progress, streamed upload bodies): a directory only this
/// user can enter, with files only this user can read.
///
/// The system's temporary directory is shared by every user on Linux, so a file made there with the default mode
/// (0644) lets anyone read a download, and a predictable name lets another user plant a symbolic link where Courier
/// is about to write. So files are made with `O_CREAT | O_EXCL` and mode 0600, inside `Courier-<uid>` (mode 0700,
/// owned by this user, not a link); if that directory exists but fails those checks, a fresh private one is made
/// for the process instead.
enum TemporaryFiles {
    /// The private directory, made on first use; `nil` if none could be made.
    static let directory: URL? = makeDirectory()

    /// A new, empty file in ``directory`` named `<prefix>-<UUID><suffix>`, open for writing.
    ///
    /// - Throws: ``CourierError/fileOperationFailed(reason:underlyingError:context:)`` when it cannot be made.
    static func makeFile(prefix: String, suffix: String = ".tmp") throws -> (url: URL, handle: FileHandle) {
        guard let directory else {
            throw CourierError.fileOperationFailed(
                reason: "Courier's private temporary directory could not be made.", underlyingError: nil,
                context: CourierError.Context())
        }
        let url = directory.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
        let descriptor = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError.fileOperationFailed(
                reason: "Could not create the temporary file \(url.path).",
                underlyingError: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO), context: CourierError.Context())
        }
        return (url, FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
    }

    /// Whether `url` names a regular file (not a link) directly inside ``directory``: the only files a resume may
    /// continue, whatever the resume data says.
    static func isOwnFile(_ url: URL) -> Bool {
        guard let directory, url.isFileURL else { return false }
        let file = url.standardizedFileURL
        guard file.deletingLastPathComponent().path == directory.standardizedFileURL.path else { return false }
        var status = stat()
        guard lstat(file.path, &status) == 0 else { return false }
        return (status.st_mode & S_IFMT) == S_IFREG && status.st_uid == getuid()
    }

    private static func makeDirectory() -> URL? {
        let base = FileManager.default.temporaryDirectory
        let shared = base.appendingPathComponent("Courier-\(getuid())", isDirectory: true)
        if mkdir(shared.path, 0o700) == 0 || (errno == EEXIST && isPrivateDirectory(shared.path)) {
            return shared
        }
        var template = Array(base.appendingPathComponent("Courier-XXXXXX").path.utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer -> URL? in
            guard let start = buffer.baseAddress, let made = mkdtemp(start) else { return nil }
            return URL(fileURLWithPath: String(cString: made), isDirectory: true)
        }
    }

    /// A directory (not a link to one) owned by this user that no one else may enter or list.
    private static func isPrivateDirectory(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return false }
        return (status.st_mode & S_IFMT) == S_IFDIR && status.st_uid == getuid() && (status.st_mode & 0o077) == 0
    }
}
