import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--unix-socket PATH` (curl's): the request goes to the Unix-domain socket at PATH, with the URL's host kept for
/// `Host`. It travels as AsyncHTTPClient's `http+unix` URL, which the session allows for this request only.
struct UnixSocket: Sendable, Hashable {
    let path: String

    /// - Throws: ``CommandFailure`` when nothing is at `path` or it is not a socket.
    init(_ path: String) throws {
        var status = stat()
        guard !path.isEmpty, stat(path, &status) == 0 else {
            throw CommandFailure(
                .failure, "--unix-socket \(TerminalText.escape(path, keepingLineBreaks: false)): no such socket")
        }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw CommandFailure(
                .failure, "--unix-socket \(TerminalText.escape(path, keepingLineBreaks: false)): not a socket")
        }
        self.path = path
    }

    /// `url` sent to the socket: `http+unix` (or `https+unix`) with the socket's path, percent-encoded, as its host,
    /// and the same path, query and fragment; `nil` for a URL that is not `http` or `https`.
    func route(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        guard let host = path.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        components.scheme = scheme + "+unix"
        components.user = nil
        components.password = nil
        components.port = nil
        components.percentEncodedHost = host
        return components.url
    }

    /// The `Host` field the URL would have had: its host and port as written.
    static func hostField(of url: URL) -> String? {
        guard let host = url.host else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return url.port.map { "\(bracketed):\($0)" } ?? bracketed
    }
}
