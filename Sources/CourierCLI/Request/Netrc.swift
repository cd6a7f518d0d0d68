import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Credentials from a `.netrc` file (`$NETRC`, else `~/.netrc`), as curl and HTTPie read it: the `machine` entry for
/// the URL's host, else the `default` entry, sent as Basic when the command gives no credentials of its own.
///
/// A file that others can read is refused rather than used (curl warns; a password file must be the user's alone),
/// and one that cannot be read is an error, not silently no credentials.
struct Netrc: Sendable, Hashable {
    /// `login` and `password` per `machine`, lower-cased.
    private(set) var machines: [String: Credential] = [:]
    private(set) var fallback: Credential?

    /// Parses the file's tokens: `machine NAME`, `default`, `login USER`, `password PASS`, and `macdef NAME`, whose
    /// body (up to a blank line) is skipped. Tokens are separated by white space; a token in double quotes may hold
    /// spaces (`\"` and `\\` escaped).
    init(parsing text: String) {
        var entry: (machine: String?, isDefault: Bool, user: String?, password: String?)?
        func close() {
            guard let current = entry else { return }
            let credential = Credential(user: current.user ?? "", password: current.password ?? "")
            if current.isDefault {
                if fallback == nil { fallback = credential }
            } else if let machine = current.machine, machines[machine] == nil {
                machines[machine] = credential
            }
            entry = nil
        }
        var tokens = Self.tokens(of: text)[...]
        while let token = tokens.popFirst() {
            switch token {
            case "machine":
                close()
                entry = (tokens.popFirst()?.lowercased(), false, nil, nil)
            case "default":
                close()
                entry = (nil, true, nil, nil)
            case "login":
                entry?.user = tokens.popFirst()
            case "password":
                entry?.password = tokens.popFirst()
            case "macdef":
                close()
                _ = tokens.popFirst()
                while let next = tokens.first, next != "\n\n" { tokens.removeFirst() }
            case "\n\n":
                break
            default:
                break
            }
        }
        close()
    }

    /// The credential for `host`: its machine's, else the default's.
    func credential(for host: String) -> Credential? {
        machines[host.lowercased()] ?? fallback
    }

    /// The file's tokens; a blank line is kept as the token `"\n\n"`, which ends a `macdef`.
    private static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var newlines = 0
        func flush() {
            if !current.isEmpty { tokens.append(current) }
            current = ""
        }
        for character in text {
            if inQuotes {
                if escaped {
                    current.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    current.append(character)
                }
                continue
            }
            if character == "\n" {
                flush()
                newlines += 1
                if newlines == 2 { tokens.append("\n\n") }
                continue
            }
            if character.isWhitespace {
                flush()
                continue
            }
            newlines = 0
            if character == "\"" && current.isEmpty {
                inQuotes = true
            } else {
                current.append(character)
            }
        }
        flush()
        return tokens
    }

    /// The file `environment` names: `$NETRC`, else `$HOME/.netrc`.
    static func path(environment: [String: String]) -> String? {
        if let path = environment["NETRC"], !path.isEmpty { return path }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home as NSString).appendingPathComponent(".netrc")
    }

    /// The credential the netrc file gives for `host`; `nil` when there is no file or no entry.
    ///
    /// - Throws: ``CommandFailure`` for a file others can read or write, or one that cannot be read.
    static func credential(for host: String, environment: [String: String]) throws -> Credential? {
        guard let path = path(environment: environment) else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else {
            // No file is no credentials; any other failure is the user's to know of.
            if errno == ENOENT { return nil }
            throw CommandFailure(.failure, "cannot read the netrc file \(path): \(String(cString: strerror(errno)))")
        }
        let shown = TerminalText.escape(path, keepingLineBreaks: false)
        if status.st_mode & 0o077 != 0 {
            throw CommandFailure(
                .failure,
                "the netrc file \(shown) can be read or written by other users: make it yours alone (chmod 600 "
                    + "\(shown)) or add --ignore-netrc")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CommandFailure(.failure, "cannot read the netrc file \(shown): \(error.localizedDescription)")
        }
        return Netrc(parsing: text).credential(for: host)
    }
}
