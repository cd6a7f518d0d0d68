import Courier
import HTTPTypes

/// A header field that `HTTPFields` cannot hold: its name is not an RFC 9110 token, or its value has a byte RFC 9110
/// forbids (a control character such as CR or LF, or white space at either end).
///
/// It is never thrown on its own: the conversions throw a ``Courier/CourierError`` with this error underneath, so
/// callers handle one error type, and this one says which field was refused and why.
public struct InvalidHTTPFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which part of the field is invalid.
    public enum Part: Sendable, Hashable {
        /// The name is empty or has a character outside RFC 9110's `token`.
        case name
        /// The value has a byte outside RFC 9110's `field-value`.
        case value
    }

    /// The field's name, as given.
    public var name: String
    /// The field's value, as given.
    public var value: String
    /// The part that is invalid.
    public var part: Part

    /// Creates an error for a field.
    public init(name: String, value: String, part: Part) {
        self.name = name
        self.value = value
        self.part = part
    }

    /// E.g. `the header field name “Bad Name” is not a valid HTTP field name`; the text is quoted with its
    /// control characters escaped, so a value carrying CR LF cannot forge a line of a log.
    public var description: String {
        switch part {
        case .name: "the header field name “\(Self.escaped(name))” is not a valid HTTP field name"
        case .value:
            "the value of the header field “\(Self.escaped(name))” is not a valid HTTP field value: "
                + "“\(Self.escaped(value))”"
        }
    }

    /// `text` with control characters written as escapes (`\r`, `\u{0}`), cut at 200 characters.
    private static func escaped(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return String(scalars.joined().prefix(200))
    }
}

extension HTTPFields {
    /// Courier's header fields as `HTTPFields`, in the same order, each name as written (`rawName` keeps its case),
    /// repeated fields (two `Set-Cookie`) kept as separate fields.
    ///
    /// - Throws: ``Courier/CourierError/parameterEncodingFailed(reason:underlyingError:)`` (code -1016, a request
    ///   that cannot be written) with an ``InvalidHTTPFieldError`` underneath, for the first field whose name or
    ///   value `HTTPFields` cannot hold. Never traps: every field is checked before it is made. For a response's
    ///   fields, use `HTTPResponse.init(_:)` from a ``Courier/ResponseHead``, which reports a bad server response
    ///   instead.
    public init(_ headers: HTTPHeaderFields) throws(CourierError) {
        self = try Self.converting(headers) { invalid in
            CourierError.parameterEncodingFailed(reason: invalid.description, underlyingError: invalid)
        }
    }

    /// The fields of `headers` in order, or `failure`'s error for the first one `HTTPFields` cannot hold.
    static func converting(
        _ headers: HTTPHeaderFields, failure: (InvalidHTTPFieldError) -> CourierError
    ) throws(CourierError) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.fields.count)
        for header in headers {
            fields.append(try HTTPField(checking: header.name, value: header.value, failure: failure))
        }
        return fields
    }
}

extension HTTPField {
    /// The field `name: value`, checked first, so that no invalid input reaches an initializer that would replace
    /// bytes or trap.
    init(checking name: String, value: String, failure: (InvalidHTTPFieldError) -> CourierError) throws(CourierError) {
        guard let fieldName = HTTPField.Name(name) else {
            throw failure(InvalidHTTPFieldError(name: name, value: value, part: .name))
        }
        guard HTTPField.isValidValue(value) else {
            throw failure(InvalidHTTPFieldError(name: name, value: value, part: .value))
        }
        self.init(name: fieldName, value: value)
    }
}

extension HTTPHeaderFields {
    /// `HTTPFields` as Courier's header fields, in the same order, each name as written (`rawName`), repeated
    /// fields kept as separate fields (``Courier/HTTPHeaderFields/add(name:value:)``). Cannot fail: every field of an
    /// `HTTPFields` is valid by construction.
    public init(_ fields: HTTPFields) {
        self.init()
        for field in fields { add(name: field.name.rawName, value: field.value) }
    }
}
