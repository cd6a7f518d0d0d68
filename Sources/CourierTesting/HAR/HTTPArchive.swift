import Foundation

/// An HTTP Archive (HAR 1.2, the format browsers' developer tools, Charles, Proxyman and mitmproxy read and
/// write): exchanges with their requests, responses, bodies and timings. ``RecordingTransport`` writes one;
/// ``ReplayTransport`` answers from one.
///
/// Reading is lenient, as files from other tools vary: a field the format requires but a file leaves out gets its
/// "unknown" value (`-1` for sizes, empty lists), and fields of tools' own (`_initiator`, …) are ignored. Writing
/// always gives every field HAR 1.2 requires.
public struct HTTPArchive: Codable, Sendable, Hashable {
    /// The archive's one root object.
    public var log: Log

    /// An empty archive from `creator`.
    public init(creator: Creator = Creator(name: "Courier", version: "1")) {
        log = Log(creator: creator)
    }

    /// Reads a HAR file.
    ///
    /// - Throws: ``StubError`` naming the file, when it cannot be read or is not a HAR file.
    public init(contentsOf file: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw StubError("the HAR file \(file.path) cannot be read: \(error.localizedDescription)")
        }
        do {
            self = try JSONDecoder().decode(HTTPArchive.self, from: data)
        } catch {
            throw StubError("\(file.path) is not a HAR file: \(error)")
        }
    }

    /// Writes the archive to `file`, replacing it at once (never half written), as indented JSON.
    ///
    /// - Throws: what writing the file throws.
    public func write(to file: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(self).write(to: file, options: .atomic)
    }

    /// `log`: the version, the creator and the entries.
    public struct Log: Codable, Sendable, Hashable {
        /// `1.2`.
        public var version = "1.2"
        /// What made the file.
        public var creator: Creator
        /// The browser, for a file a browser made.
        public var browser: Creator?
        /// The exchanges, in the order they completed.
        public var entries: [Entry] = []
        /// A comment.
        public var comment: String?

        /// An empty log from `creator`.
        public init(creator: Creator) { self.creator = creator }

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            version = try c.decodeIfPresent(String.self, forKey: .version) ?? "1.2"
            creator = try c.decodeIfPresent(Creator.self, forKey: .creator) ?? Creator(name: "unknown", version: "")
            browser = try c.decodeIfPresent(Creator.self, forKey: .browser)
            entries = try c.decodeIfPresent([Entry].self, forKey: .entries) ?? []
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }
    }

    /// `creator` and `browser`: a name and version.
    public struct Creator: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The version.
        public var version: String
        /// A comment.
        public var comment: String?

        /// A creator named `name` at `version`.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// One exchange.
    public struct Entry: Codable, Sendable, Hashable {
        /// When the request started, ISO 8601 with milliseconds (e.g. `2026-11-27T10:00:00.000Z`).
        public var startedDateTime: String
        /// The whole exchange's time, in milliseconds.
        public var time: Double
        /// The request.
        public var request: Request
        /// The response.
        public var response: Response
        /// The cache's part (always empty here: the session's cache is above the transport).
        public var cache = Cache()
        /// The phases, in milliseconds.
        public var timings: Timings
        /// The server's IP address, when known.
        public var serverIPAddress: String?
        /// A comment.
        public var comment: String?

        /// An entry.
        public init(startedDateTime: String, time: Double, request: Request, response: Response, timings: Timings) {
            self.startedDateTime = startedDateTime
            self.time = time
            self.request = request
            self.response = response
            self.timings = timings
        }

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            startedDateTime = try c.decodeIfPresent(String.self, forKey: .startedDateTime) ?? ""
            time = try c.decodeIfPresent(Double.self, forKey: .time) ?? -1
            request = try c.decode(Request.self, forKey: .request)
            response = try c.decode(Response.self, forKey: .response)
            cache = try c.decodeIfPresent(Cache.self, forKey: .cache) ?? Cache()
            timings = try c.decodeIfPresent(Timings.self, forKey: .timings) ?? Timings()
            serverIPAddress = try c.decodeIfPresent(String.self, forKey: .serverIPAddress)
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }
    }

    /// A request.
    public struct Request: Codable, Sendable, Hashable {
        /// The method.
        public var method: String
        /// The absolute URL (without its fragment).
        public var url: String
        /// E.g. `HTTP/1.1`.
        public var httpVersion: String
        /// The cookies the request sent.
        public var cookies: [Cookie] = []
        /// The header fields, in order.
        public var headers: [NameValue] = []
        /// The URL's query items.
        public var queryString: [NameValue] = []
        /// The body, if any.
        public var postData: PostData?
        /// The head's size in bytes; `-1`: unknown.
        public var headersSize = -1
        /// The body's size in bytes; `-1`: unknown.
        public var bodySize = -1
        /// A comment.
        public var comment: String?

        /// A request.
        public init(method: String, url: String, httpVersion: String) {
            self.method = method
            self.url = url
            self.httpVersion = httpVersion
        }

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            method = try c.decode(String.self, forKey: .method)
            url = try c.decode(String.self, forKey: .url)
            httpVersion = try c.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1"
            cookies = try c.decodeIfPresent([Cookie].self, forKey: .cookies) ?? []
            headers = try c.decodeIfPresent([NameValue].self, forKey: .headers) ?? []
            queryString = try c.decodeIfPresent([NameValue].self, forKey: .queryString) ?? []
            postData = try c.decodeIfPresent(PostData.self, forKey: .postData)
            headersSize = try c.decodeIfPresent(Int.self, forKey: .headersSize) ?? -1
            bodySize = try c.decodeIfPresent(Int.self, forKey: .bodySize) ?? -1
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }
    }

    /// A response.
    public struct Response: Codable, Sendable, Hashable {
        /// The status code.
        public var status: Int
        /// The reason phrase.
        public var statusText: String
        /// E.g. `HTTP/1.1`, `HTTP/2`.
        public var httpVersion: String
        /// The cookies the response set.
        public var cookies: [Cookie] = []
        /// The header fields, in order.
        public var headers: [NameValue] = []
        /// The body.
        public var content: Content
        /// The `Location` field's value; empty when there is none.
        public var redirectURL = ""
        /// The head's size in bytes; `-1`: unknown.
        public var headersSize = -1
        /// The body's size as received (compressed) in bytes; `-1`: unknown.
        public var bodySize = -1
        /// A comment.
        public var comment: String?

        /// A response.
        public init(status: Int, statusText: String, httpVersion: String, content: Content) {
            self.status = status
            self.statusText = statusText
            self.httpVersion = httpVersion
            self.content = content
        }

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            status = try c.decode(Int.self, forKey: .status)
            statusText = try c.decodeIfPresent(String.self, forKey: .statusText) ?? ""
            httpVersion = try c.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1"
            cookies = try c.decodeIfPresent([Cookie].self, forKey: .cookies) ?? []
            headers = try c.decodeIfPresent([NameValue].self, forKey: .headers) ?? []
            content = try c.decodeIfPresent(Content.self, forKey: .content) ?? Content(size: 0, mimeType: "")
            redirectURL = try c.decodeIfPresent(String.self, forKey: .redirectURL) ?? ""
            headersSize = try c.decodeIfPresent(Int.self, forKey: .headersSize) ?? -1
            bodySize = try c.decodeIfPresent(Int.self, forKey: .bodySize) ?? -1
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }
    }

    /// A header field, query item or form parameter.
    public struct NameValue: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// A comment.
        public var comment: String?

        /// `name: value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie.
    public struct Cookie: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// The path attribute.
        public var path: String?
        /// The domain attribute.
        public var domain: String?
        /// The expiry, ISO 8601.
        public var expires: String?
        /// The HttpOnly attribute.
        public var httpOnly: Bool?
        /// The Secure attribute.
        public var secure: Bool?
        /// A comment.
        public var comment: String?

        /// `name=value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request body.
    public struct PostData: Codable, Sendable, Hashable {
        /// Its `Content-Type`.
        public var mimeType: String
        /// The body as text; base64 when ``encoding`` says so (a field of Courier's own: HAR 1.2 has none for
        /// request bodies, so bytes that are not UTF-8 could not be kept otherwise).
        public var text: String?
        /// `base64`, when ``text`` is.
        public var encoding: String?
        /// Form parameters, as browsers list a URL-encoded or multipart form.
        public var params: [Param]?
        /// A comment.
        public var comment: String?

        /// A body of `mimeType`.
        public init(mimeType: String, text: String?, encoding: String? = nil) {
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
        }

        enum CodingKeys: String, CodingKey {
            case mimeType, text, params, comment
            case encoding = "_encoding"
        }

        /// The body's bytes; `nil` when there is no text.
        public var data: Data? { text.flatMap { HTTPArchive.bytes(of: $0, encoding: encoding) } }
    }

    /// A form parameter of a request body.
    public struct Param: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String?
        /// A file's name.
        public var fileName: String?
        /// A file's type.
        public var contentType: String?
        /// A comment.
        public var comment: String?
    }

    /// A response body.
    public struct Content: Codable, Sendable, Hashable {
        /// Its length in bytes, after any decoding.
        public var size: Int
        /// Bytes saved by compression.
        public var compression: Int?
        /// Its `Content-Type`.
        public var mimeType: String
        /// The body as text; base64 when ``encoding`` is `base64`.
        public var text: String?
        /// `base64` when ``text`` is.
        public var encoding: String?
        /// A comment.
        public var comment: String?

        /// A body of `size` bytes and `mimeType`.
        public init(size: Int, mimeType: String, text: String? = nil, encoding: String? = nil) {
            self.size = size
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
        }

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            size = try c.decodeIfPresent(Int.self, forKey: .size) ?? -1
            compression = try c.decodeIfPresent(Int.self, forKey: .compression)
            mimeType = try c.decodeIfPresent(String.self, forKey: .mimeType) ?? ""
            text = try c.decodeIfPresent(String.self, forKey: .text)
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }

        /// The body's bytes; empty when the archive kept no text.
        public var data: Data { text.flatMap { HTTPArchive.bytes(of: $0, encoding: encoding) } ?? Data() }
    }

    /// The cache's part of an entry (always empty here).
    public struct Cache: Codable, Sendable, Hashable {
        /// A comment.
        public var comment: String?

        /// An empty one.
        public init() {}
    }

    /// An exchange's phases in milliseconds; `-1` for a phase that does not apply.
    public struct Timings: Codable, Sendable, Hashable {
        /// Waiting for a connection.
        public var blocked: Double? = -1
        /// Resolving the host.
        public var dns: Double? = -1
        /// Connecting (TLS included).
        public var connect: Double? = -1
        /// Sending the request.
        public var send: Double = 0
        /// Waiting for the response's first byte.
        public var wait: Double = 0
        /// Reading the response.
        public var receive: Double = 0
        /// The TLS handshake (within ``connect``).
        public var ssl: Double? = -1
        /// A comment.
        public var comment: String?

        /// All zero: nothing measured.
        public init() {}

        /// Decodes leniently: see ``HTTPArchive``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            blocked = try c.decodeIfPresent(Double.self, forKey: .blocked)
            dns = try c.decodeIfPresent(Double.self, forKey: .dns)
            connect = try c.decodeIfPresent(Double.self, forKey: .connect)
            send = try c.decodeIfPresent(Double.self, forKey: .send) ?? 0
            wait = try c.decodeIfPresent(Double.self, forKey: .wait) ?? 0
            receive = try c.decodeIfPresent(Double.self, forKey: .receive) ?? 0
            ssl = try c.decodeIfPresent(Double.self, forKey: .ssl)
            comment = try c.decodeIfPresent(String.self, forKey: .comment)
        }
    }

    /// The bytes of a body kept as `text`: base64-decoded when `encoding` says so, UTF-8 otherwise.
    static func bytes(of text: String, encoding: String?) -> Data? {
        if encoding?.lowercased() == "base64" { return Data(base64Encoded: text, options: .ignoreUnknownCharacters) }
        return Data(text.utf8)
    }
}
