import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The cookie jar of one `courier` run: every hop of `--follow` (and every retry) sends what the hops before it
/// set, by the jar's rules. It starts with the `--session`'s cookies and `--cookie`'s, and ends in the session
/// file and `--cookie-jar`'s file.
struct CommandCookies {
    let jar = CookieJar()

    /// Loads `session`'s cookies and what `--cookie` gives: `NAME=VALUE[; NAME2=VALUE2]` (as curl's `-b`, a text with
    /// `=`) becomes cookies for the request's host only; anything else is a cookie file in curl's format, and a
    /// missing file counts as empty (as in curl, so `-b FILE -c FILE` works on the first run).
    ///
    /// - Throws: ``CommandFailure`` for a file that exists but cannot be read.
    init(session: StoredSession, cookieOption: String?, url: URL?) throws {
        for cookie in session.cookies { jar.insert(cookie) }
        guard let cookieOption else { return }
        if cookieOption.contains("=") {
            if let url { Self.addPairs(cookieOption, for: url, to: jar) }
            return
        }
        guard FileManager.default.fileExists(atPath: cookieOption) else { return }
        guard let data = FileManager.default.contents(atPath: cookieOption) else {
            throw CommandFailure(.failure, "--cookie: cannot read \(cookieOption)")
        }
        jar.insert(netscapeFileText: String(decoding: data, as: UTF8.self))
    }

    /// Adds the pairs of a `Cookie` field's value (`a=1; b=2`) as session cookies for `url`'s host and every path.
    static func addPairs(_ field: String, for url: URL, to jar: CookieJar) {
        for pair in field.split(separator: ";") {
            let text = pair.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            jar.setCookie(text + "; Path=/", for: url)
        }
    }

    /// The `Cookie` field the jar gives a request to `url`, for printing the request as it goes out.
    func field(for url: URL) -> String? { jar.cookieField(for: url) }

    /// Writes the jar to `path` in curl's format, mode 0600 (`-`: standard output), as `curl -c` does.
    ///
    /// - Throws: ``CommandFailure`` when the file cannot be written.
    func save(toCookieFile path: String, console: Console) throws {
        let text = jar.netscapeFileText
        if path == "-" {
            console.out(Data(text.utf8))
            return
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CommandFailure(.failure, "--cookie-jar: cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
        } catch {
            throw CommandFailure(.failure, "--cookie-jar: cannot write \(path): \(error)")
        }
    }
}
