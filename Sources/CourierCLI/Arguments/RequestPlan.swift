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
        for argument in rest {
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
        self.url = try Self.expandURL(urlArgument)
        self.method = method ?? (items.contains(where: \.isBodyField) ? "POST" : "GET")
    }

    /// HTTPie's URL shorthands: `:8080/x` is `http://localhost:8080/x`, `:/x` is `http://localhost/x`, and a URL
    /// without a scheme gets `http://`.
    ///
    /// - Throws: ``CommandFailure`` when the result is not an http or https URL with a host.
    static func expandURL(_ argument: String) throws -> String {
        var text = argument
        if text.hasPrefix(":") {
            let rest = text.dropFirst()
            text = "localhost" + (rest.first == "/" || rest.isEmpty ? "" : ":") + rest
        }
        if text.range(of: "^[A-Za-z][A-Za-z0-9+.-]*://", options: .regularExpression) == nil {
            text = "http://" + text
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw CommandFailure(.failure, "“\(argument)” is not an http or https URL")
        }
        return text
    }
}
