import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request ready to send: the `URLRequest`, and the body when it is streamed rather than in `httpBody`.
struct PreparedRequest: Sendable {
    var urlRequest: URLRequest
    var body: RequestBody?
}

/// `--auth user:password` and `--auth-type`.
struct AuthOptions: Sendable, Hashable {
    /// Basic is sent with the first request; Digest answers the server's challenge.
    enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// HTTP Basic.
        case basic
        /// HTTP Digest.
        case digest
    }

    /// The credential.
    var credential: Credential
    /// How it is sent.
    var scheme: Scheme

    /// Parses `user:password`; the password may contain `:`.
    ///
    /// - Throws: ``CommandFailure`` when there is no `:`.
    init(_ text: String, scheme: Scheme) throws {
        guard let colon = text.firstIndex(of: ":") else {
            throw CommandFailure(.failure, "--auth “\(text)” needs a password: use --auth user:password")
        }
        credential = Credential(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        self.scheme = scheme
    }
}

/// Builds the request a ``RequestPlan`` describes with Courier's request serializers: query items in order, data
/// fields through ``JSONRequestSerializer`` or ``HTTPRequestSerializer``, headers last so they win.
enum RequestBuilder {
    static let userAgent = "courier/\(DefaultHeaders.courierVersion)"

    /// Builds the request.
    ///
    /// - Throws: ``CommandFailure`` for a file that cannot be read or a `:=` value that is not JSON, and the
    ///   serializers' errors.
    static func build(_ plan: RequestPlan, auth: AuthOptions?, timeout: TimeInterval?) throws -> PreparedRequest {
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
            let request = http.applyingHeaders(to: try http.makeRequest(method: plan.method, url: url))
            let (multipart, body) = try MultipartEncoding.encode(
                request, fields: try textFields(plan), files: fileFields(plan))
            prepared = PreparedRequest(urlRequest: multipart, body: body)
        }

        for item in plan.items {
            switch item.kind {
            case .header(let value): prepared.urlRequest.setValue(value, forHTTPHeaderField: item.name)
            case .emptyHeader: prepared.urlRequest.setValue("", forHTTPHeaderField: item.name)
            case .removeHeader: prepared.urlRequest.setValue(nil, forHTTPHeaderField: item.name)
            default: break
            }
        }
        return prepared
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
            throw CommandFailure(.failure, "\(item.name):= “\(text)” is not valid JSON")
        }
    }
}

extension Parameter {
    /// The parameter for a JSON value; whole numbers become integers so they are written without a fraction.
    init(json: JSON) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .string(let value): self = .string(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
                self = .int(Int(value))
            } else {
                self = .double(value)
            }
        case .array(let values): self = .array(values.map(Parameter.init(json:)))
        case .object(let values): self = .dictionary(values.mapValues(Parameter.init(json:)))
        }
    }
}

/// Data fields nested by HTTPie's key paths: `user[name]=x` is `{"user": {"name": "x"}}` and `tags[]=a` appends
/// to the array `tags`.
struct FieldTree {
    private(set) var parameter: Parameter = .dictionary([:])

    /// Puts `value` at the key path `path`.
    ///
    /// - Throws: ``CommandFailure`` when the path conflicts with a value already there (`a=1 a[b]=2`).
    mutating func insert(_ value: Parameter, at path: String) throws {
        let keys = Self.keys(of: path)
        parameter = try Self.inserting(value, into: parameter, keys: keys[...], path: path)
    }

    /// `a[b][]` → `["a", "b", ""]`; a name without brackets is one key, brackets and all if unbalanced.
    static func keys(of path: String) -> [String] {
        guard let open = path.firstIndex(of: "["), open != path.startIndex, path.hasSuffix("]") else { return [path] }
        var keys = [String(path[..<open])]
        var rest = path[open...]
        while rest.first == "[", let close = rest.firstIndex(of: "]") {
            keys.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return rest.isEmpty ? keys : [path]
    }

    private static func inserting(
        _ value: Parameter, into node: Parameter?, keys: ArraySlice<String>, path: String
    ) throws -> Parameter {
        guard let key = keys.first else { return value }
        let rest = keys.dropFirst()
        if key.isEmpty, keys.startIndex != 0 {
            var elements: [Parameter]
            switch node {
            case nil: elements = []
            case .array(let existing): elements = existing
            default: throw conflict(path)
            }
            elements.append(try inserting(value, into: nil, keys: rest, path: path))
            return .array(elements)
        }
        var dictionary: [String: Parameter]
        switch node {
        case nil: dictionary = [:]
        case .dictionary(let existing): dictionary = existing
        default: throw conflict(path)
        }
        if rest.isEmpty, dictionary[key] != nil {
            // A repeated plain name collects its values, as HTTPie does.
            if case .array(var existing) = dictionary[key] {
                existing.append(value)
                dictionary[key] = .array(existing)
            } else if let existing = dictionary[key] {
                dictionary[key] = .array([existing, value])
            }
            return .dictionary(dictionary)
        }
        dictionary[key] = try inserting(value, into: dictionary[key], keys: rest, path: path)
        return .dictionary(dictionary)
    }

    private static func conflict(_ path: String) -> CommandFailure {
        CommandFailure(.failure, "the data field \(path) conflicts with another field of the same name")
    }
}
