import Courier
import Foundation

/// How data fields go into the body.
enum BodyMode: String, Sendable, Hashable, CaseIterable {
    /// A JSON object (HTTPie's default).
    case json
    /// `application/x-www-form-urlencoded`.
    case form
    /// `multipart/form-data`.
    case multipart
}

/// What `courier [METHOD] URL [ITEM ...]` asks for, before any file is read or request is built.
struct RequestPlan: Sendable, Hashable {
    /// The method, upper-case.
    var method: String
    /// The absolute URL, shorthands expanded, without the query items.
    var url: String
    /// The items, in the order given.
    var items: [RequestItem]
    /// How the body is written.
    var bodyMode: BodyMode
    /// The user and password of the URL's user info (`http://user:pass@host/`), percent-decoded; ``url`` no longer
    /// has them. Sent as Basic credentials (as curl and HTTPie do) unless `--auth` is given.
    var urlCredential: Credential?
    /// The path of an `@FILE` argument: the file is the whole body (see ``RawBody``).
    var bodyFile: String?
    /// Whether the method was given; without it, a request with a body is a POST.
    var methodGiven: Bool
    /// `--json`, `--form` or `--multipart`, when given.
    var requestedMode: BodyMode?

    /// The methods recognised even when the argument after them could be an item.
    static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT",
    ]

    /// Reads the positional arguments.
    ///
    /// The first argument is the method when it is letters only and something follows it, unless it is not a known
    /// method and the next argument reads as an item (`courier localhost x==1`). Without a method: POST when there
    /// are body fields, else GET.
    ///
    /// - Parameter requestedMode: `--json`, `--form` or `--multipart`, if given.
    /// - Throws: ``CommandFailure`` naming the argument that is wrong.
    init(arguments: [String], requestedMode: BodyMode?) throws {
        guard let first = arguments.first else {
            throw CommandFailure(.failure, "missing URL: usage is courier [METHOD] URL [ITEM ...]")
        }
        var rest = arguments.dropFirst()
        var method: String?
        if let next = rest.first, first.allSatisfy({ $0.isASCII && $0.isLetter }) {
            let upper = first.uppercased()
            if Self.knownMethods.contains(upper) || RequestItem.parse(next) == nil {
                method = upper
            }
        }
        var urlArgument = first
        if method != nil, let next = rest.first {
            urlArgument = next
            rest = rest.dropFirst()
        }
        var items: [RequestItem] = []
        var bodyFile: String?
        for argument in rest {
            // `@FILE` alone (no field name): the file is the whole body, as in HTTPie.
            if let item = RequestItem.parse(argument), item.name.isEmpty, case .file(let path, nil) = item.kind {
                guard bodyFile == nil else {
                    throw CommandFailure(.failure, "“\(argument)”: only one @FILE can be the body")
                }
                bodyFile = path
                continue
            }
            guard let item = RequestItem.parse(argument) else {
                throw CommandFailure(
                    .failure,
                    "“\(argument)” is not a request item: use name==value, Header:value, name=value, name:=json "
                        + "or name@file")
            }
            items.append(item)
        }
        let hasFiles = items.contains { if case .file = $0.kind { return true } else { return false } }
        if hasFiles, let requestedMode, requestedMode != .multipart {
            throw CommandFailure(
                .failure,
                "file fields (name@path) are sent as multipart form data and cannot be used with --\(requestedMode); "
                    + "use name=@path to send a file's text as a field")
        }
        self.bodyMode = requestedMode ?? (hasFiles ? .multipart : .json)
        self.items = items
        let (url, credential) = Self.removingUserInfo(try Self.expandURL(urlArgument))
        self.url = url
        self.urlCredential = credential
        self.bodyFile = bodyFile
        self.methodGiven = method != nil
        self.requestedMode = requestedMode
        self.method = method ?? (items.contains(where: \.isBodyField) || bodyFile != nil ? "POST" : "GET")
    }

    /// HTTPie's URL shorthands: `:8080/x` is `http://localhost:8080/x`, `:/x` is `http://localhost/x`, and a URL
    /// without a scheme gets `http://`.
    ///
    /// - Throws: ``CommandFailure`` when the result is not an http or https URL with a host, or its port is not a
    ///   number from 1 to 65535.
    static func expandURL(_ argument: String) throws -> String {
        var text = argument
        if text.hasPrefix(":") {
            let rest = text.dropFirst()
            text = "localhost" + (rest.first == "/" || rest.isEmpty ? "" : ":") + rest
        }
        if text.range(of: "^[A-Za-z][A-Za-z0-9+.-]*://", options: .regularExpression) == nil {
            text = "http://" + text
        }
        // Before Foundation parses it: what a parser does with a port past 65535 is not to be relied on.
        try checkPort(of: text, argument: argument)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw CommandFailure(.failure, "“\(argument)” is not an http or https URL")
        }
        return text
    }

    /// The `user:password@host:port` part of an absolute URL's text.
    static func authorityRange(in text: String) -> Range<String.Index>? {
        guard let scheme = text.range(of: "://") else { return nil }
        let end = text[scheme.upperBound...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        return scheme.upperBound..<end
    }

    /// Refuses a port that is not a number from 1 to 65535: Foundation parses `:70000` as 70000, which a
    /// conversion to a 16-bit port further down would trap on or wrap.
    ///
    /// - Throws: ``CommandFailure`` naming the port.
    static func checkPort(of text: String, argument: String) throws {
        guard let authority = authorityRange(in: text) else { return }
        var hostPort = text[authority]
        if let at = hostPort.lastIndex(of: "@") { hostPort = hostPort[hostPort.index(after: at)...] }
        let afterHost: Substring
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return }
            afterHost = hostPort[hostPort.index(after: close)...]
        } else if let colon = hostPort.lastIndex(of: ":") {
            afterHost = hostPort[colon...]
        } else {
            return
        }
        guard afterHost.hasPrefix(":") else { return }
        let port = afterHost.dropFirst()
        // An empty port means the scheme's default (RFC 3986, section 3.2.3).
        if port.isEmpty { return }
        // `Int(_:)` is nil past Int.max, so a port of any length is refused rather than trapping.
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number)
        else {
            throw CommandFailure(.failure, "“\(argument)”: the port \(port) is not a number from 1 to 65535")
        }
    }

    /// The URL without its user info, and the user info's credential (percent-decoded).
    ///
    /// `http://user:pass@host/` becomes `http://host/` and `user`/`pass`; `http://user@host/` has an empty password.
    /// The credential is not left in the URL, where it would be printed with `--verbose` and logged by servers.
    static func removingUserInfo(_ text: String) -> (String, Credential?) {
        guard let authority = authorityRange(in: text), let at = text[authority].lastIndex(of: "@") else {
            return (text, nil)
        }
        let userInfo = text[authority.lowerBound..<at]
        var stripped = text
        stripped.removeSubrange(authority.lowerBound...at)
        guard !userInfo.isEmpty else { return (stripped, nil) }
        let colon = userInfo.firstIndex(of: ":")
        let user = String(userInfo[..<(colon ?? userInfo.endIndex)])
        let password = colon.map { String(userInfo[userInfo.index(after: $0)...]) } ?? ""
        let credential = Credential(
            user: user.removingPercentEncoding ?? user, password: password.removingPercentEncoding ?? password)
        return (stripped, credential)
    }
}
