import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where a ``StoredSession`` lives and how it is read and written: `<config>/courier/sessions/<host>_<port>/<name>.json`,
/// `<config>` being `$XDG_CONFIG_HOME` or `~/.config`. The folders are made with mode 0700 (the session's own
/// folder is tightened to 0700 when it exists with a looser mode) and the file is written
/// with mode 0600 (it holds credentials and cookies): to a new file beside it, then renamed over it, so a reader
/// never sees half a session. A read-only session (`--session-read-only`) is never written.
struct SessionFile: Sendable {
    let url: URL
    let readOnly: Bool
    /// Whether the folder is Courier's own (a named session's), which ``save(_:replacing:)`` keeps at mode 0700; a
    /// session given as a path lives in a folder of the user's, which is left as it is.
    var ownsFolder = true

    /// The file of session `name` for requests to `target`; a `name` with a `/` is the file's path itself (as in
    /// HTTPie: one file for every host, so cookies set for other hosts along a redirect are sent there next time).
    ///
    /// - Throws: ``CommandFailure`` for a name that is not letters, digits, `-`, `_` and `.` (a name cannot
    ///   reach another folder), or when there is no configuration folder.
    static func locate(name: String, for target: URL, readOnly: Bool, environment: [String: String]) throws
        -> SessionFile
    {
        if name.contains("/") {
            var path = name
            if path.hasPrefix("~/"), let home = environment["HOME"], home.hasPrefix("/") {
                path = home + path.dropFirst()
            }
            return SessionFile(url: URL(fileURLWithPath: path), readOnly: readOnly, ownsFolder: false)
        }
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        guard !name.isEmpty, name.count <= 100, !name.hasPrefix("."),
            name.unicodeScalars.allSatisfy({ allowed.contains($0) })
        else {
            throw CommandFailure(
                .failure, "--session names are letters, digits, '-', '_' and '.', not starting with '.'")
        }
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = URL(fileURLWithPath: home).appendingPathComponent(".config")
        } else {
            throw CommandFailure(.failure, "--session needs HOME or XDG_CONFIG_HOME to find the configuration folder")
        }
        let host = (target.host ?? "").lowercased().filter { $0.isLetter || $0.isNumber || "-.:".contains($0) }
            .replacingOccurrences(of: ":", with: "-")
        let port = target.port ?? (target.scheme?.lowercased() == "https" ? 443 : 80)
        let folder = base.appendingPathComponent("courier/sessions/\(host)_\(port)")
        return SessionFile(url: folder.appendingPathComponent(name + ".json"), readOnly: readOnly)
    }

    /// The session stored; an empty one when there is no file yet.
    ///
    /// - Throws: ``CommandFailure`` for a file that is not a session.
    func load() throws -> StoredSession {
        guard let data = FileManager.default.contents(atPath: url.path) else { return StoredSession() }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let date = Self.date(text) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
                }
                return date
            }
            return try decoder.decode(StoredSession.self, from: data)
        } catch {
            throw CommandFailure(.failure, "the session file \(url.path) is not a courier session: \(error)")
        }
    }

    private static let fractionalDates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// An ISO 8601 date with or without fractions of a second (files written before had none).
    static func date(_ text: String) -> Date? {
        (try? fractionalDates.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// Writes `session` (mode 0600), unless the session is read-only or unchanged.
    ///
    /// - Throws: ``CommandFailure`` when the file cannot be written.
    func save(_ session: StoredSession, replacing previous: StoredSession) throws {
        guard !readOnly, session != previous else { return }
        let folder = url.deletingLastPathComponent()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Fractions of a second: cookies set in one run are told apart by their creation dates.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Self.fractionalDates))
        }
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            if ownsFolder { try Self.makePrivate(folder) }
            let data = try encoder.encode(session)
            let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
            let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            do {
                try handle.write(contentsOf: data)
                try handle.close()
            } catch {
                unlink(temporary.path)
                throw error
            }
            guard rename(temporary.path, url.path) == 0 else {
                let code = errno
                unlink(temporary.path)
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(.failure, "cannot write the session file \(url.path): \(error)")
        }
    }

    /// Makes the session's folder 0700: `createDirectory` leaves a folder that already exists as it is, and one
    /// made 0755 by hand or by an older version would let other users list the session names (and read a file
    /// whose mode someone loosened). A folder that is not this user's, or is a link, is refused rather than changed.
    private static func makePrivate(_ folder: URL) throws {
        var status = stat()
        guard lstat(folder.path, &status) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        guard status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid() else {
            throw CommandFailure(
                .failure,
                "refusing to keep a session in \(folder.path): it is not a folder of this user's (or it is a link)")
        }
        guard status.st_mode & 0o077 != 0 else { return }
        guard chmod(folder.path, 0o700) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
