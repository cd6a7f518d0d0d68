import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request ready to send: the `URLRequest`, and the body when it is streamed rather than in `httpBody`.
struct PreparedRequest: Sendable {
    var urlRequest: URLRequest
    var body: HTTPRequestBody?
}

/// Builds the request a ``RequestPlan`` describes with Courier's request serializers: query items in order, data
/// fields through ``JSONRequestSerializer`` or ``HTTPRequestSerializer``, headers last so they win.
enum RequestBuilder {
    static let userAgent = "courier/\(DefaultHeaders.courierVersion)"

    /// Builds the request; `rawBody` (``RawBody``), when given, is its whole body, and header items still win over
    /// its type.
    ///
    /// - Throws: ``CommandFailure`` for a file that cannot be read or a `:=` value that is not JSON, and the
    ///   serializers' errors.
    static func build(
        _ plan: RequestPlan, auth: AuthOptions?, timeout: TimeInterval?, rawBody: RawBody? = nil
    ) throws -> PreparedRequest {
        guard var url = URL(string: plan.url) else { throw CommandFailure(.failure, "“\(plan.url)” is not a URL") }
        let query = plan.items.compactMap { item -> String? in
            guard case .query(let value) = item.kind else { return nil }
            return QueryString.percentEscape(item.name) + "=" + QueryString.percentEscape(value)
        }
        if !query.isEmpty {
            let separator = url.query == nil ? "?" : "&"
            guard let withQuery = URL(string: plan.url + separator + query.joined(separator: "&")) else {
                throw CommandFailure(.failure, "the query items do not make a valid URL with \(plan.url)")
            }
            url = withQuery
        }

        var http = HTTPRequestSerializer()
        http.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        http.setValue(plan.bodyMode == .json ? "application/json, */*;q=0.5" : "*/*", forHTTPHeaderField: "Accept")
        if let timeout { http.timeoutInterval = timeout }
        if let auth, auth.scheme == .basic {
            http.setAuthorization(username: auth.credential.user, password: auth.credential.password)
        } else if let auth, auth.scheme == .bearer {
            http.setValue("Bearer \(auth.credential.password)", forHTTPHeaderField: "Authorization")
        }

        var prepared: PreparedRequest
        switch plan.bodyMode {
        case .json:
            let serializer = JSONRequestSerializer(http: http, outputFormatting: [.sortedKeys])
            let request = try serializer.request(method: plan.method, url: url, parameters: try parameters(plan))
            prepared = PreparedRequest(urlRequest: request, body: nil)
        case .form:
            let request = try http.request(method: plan.method, url: url, parameters: try parameters(plan))
            prepared = PreparedRequest(urlRequest: request, body: nil)
        case .multipart:
            let (multipart, body) = try MultipartEncoding.encode(
                serializer: http, method: plan.method, url: url, fields: try textFields(plan),
                files: fileFields(plan))
            prepared = PreparedRequest(urlRequest: multipart, body: body)
        }
        try rawBody?.apply(to: &prepared, mode: plan.requestedMode)

        for item in plan.items {
            switch item.kind {
            case .header(let value):
                try checkHeader(item.name, value)
                prepared.urlRequest.setValue(value, forHTTPHeaderField: item.name)
            case .emptyHeader:
                try checkHeader(item.name, "")
                prepared.urlRequest.setValue("", forHTTPHeaderField: item.name)
            case .removeHeader:
                try checkHeader(item.name, "")
                prepared.urlRequest.setValue(nil, forHTTPHeaderField: item.name)
            default: break
            }
        }
        return prepared
    }

    /// Refuses a header item that would not be one header line: a CR, LF or NUL in its name or value would be
    /// dropped by the transport at best and, at worst, smuggle in a second header (`X-A:foo\r\nX-B: evil`).
    ///
    /// - Throws: ``CommandFailure`` naming the header.
    static func checkHeader(_ name: String, _ value: String) throws {
        let forbidden: (Unicode.Scalar) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
        guard !name.isEmpty else {
            throw CommandFailure(.failure, "the header item “:\(quoted(value))” has no name")
        }
        if name.unicodeScalars.contains(where: forbidden) || value.unicodeScalars.contains(where: forbidden) {
            throw CommandFailure(
                .failure,
                "the header \(TerminalText.escape(quoted(name), keepingLineBreaks: false)) has a line break or a NUL "
                    + "in its name or value; a header item is one line")
        }
        if let bad = name.unicodeScalars.first(where: { !isTokenCharacter($0) }) {
            throw CommandFailure(
                .failure,
                "the header name “\(TerminalText.escape(quoted(name), keepingLineBreaks: false))” has the character "
                    + "“\(TerminalText.escape(String(bad), keepingLineBreaks: false))”, which a header name cannot have"
            )
        }
    }

    /// Whether a character may appear in a header name (RFC 9110's `tchar`).
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII
            && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
    }

    /// The longest part of a user's value quoted in a message.
    static let longestQuote = 60

    /// `text`, cut to ``longestQuote`` characters with `…` when longer: a 200 KB value is not worth echoing.
    static func quoted(_ text: String) -> String {
        text.count <= longestQuote ? text : String(text.prefix(longestQuote)) + "…"
    }

    /// The data fields as a parameter tree; `nil` when there are none (no body at all).
    static func parameters(_ plan: RequestPlan) throws -> Parameter? {
        var root = FieldTree()
        var any = false
        for item in plan.items {
            let value: Parameter
            switch item.kind {
            case .dataField(let text): value = .string(text)
            case .dataFieldFile(let path): value = .string(try readText(path, item: item))
            case .jsonField(let text): value = try json(text, item: item)
            case .jsonFieldFile(let path): value = try json(try readText(path, item: item), item: item)
            default: continue
            }
            any = true
            try root.insert(value, at: item.name)
        }
        return any ? root.parameter : nil
    }

    /// The data fields of a multipart request: text only, as form parts are.
    static func textFields(_ plan: RequestPlan) throws -> [(name: String, value: String)] {
        try plan.items.compactMap { item in
            switch item.kind {
            case .dataField(let text): return (item.name, text)
            case .dataFieldFile(let path): return (item.name, try readText(path, item: item))
            case .jsonField, .jsonFieldFile:
                throw CommandFailure(
                    .failure, "\(item.name):= is a JSON field; multipart form fields are text: use \(item.name)=value")
            default: return nil
            }
        }
    }

    static func fileFields(_ plan: RequestPlan) -> [FileField] {
        plan.items.compactMap { item in
            guard case .file(let path, let type) = item.kind else { return nil }
            return FileField(name: item.name, path: path, mimeType: type)
        }
    }

    static func readText(_ path: String, item: RequestItem) throws -> String {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let text = String(data: data, encoding: .utf8) else {
                throw CommandFailure(.failure, "\(item.name): \(path) is not UTF-8 text; send it as name@\(path)")
            }
            return text
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(.failure, "\(item.name): cannot read \(path): \(error.localizedDescription)")
        }
    }

    static func json(_ text: String, item: RequestItem) throws -> Parameter {
        do {
            return Parameter(json: try JSON(data: Data(text.utf8)))
        } catch {
            throw CommandFailure(.failure, "\(quoted(item.name)):= “\(quoted(text))” is not valid JSON")
        }
    }
}
