import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tries several serializers in order and returns the first result (`AFCompoundResponseSerializer`).
///
/// A serializer succeeds when it returns a non-`nil` object without throwing. When none succeeds, the compound
/// validates with its own ``acceptableStatusCodes`` / ``acceptableContentTypes`` and returns the raw body, as
/// AFNetworking falls back to `AFHTTPResponseSerializer`; if that validation fails, its error is thrown with the
/// last component's error underneath.
public struct CompoundResponseSerializer: ResponseValidating {
    /// The serializers, in the order they are tried.
    public var serializers: [any ResponseSerializer]
    /// The status codes the fallback accepts; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The MIME types the fallback accepts; default `nil` (any).
    public var acceptableContentTypes: Set<String>?

    /// Creates a compound serializer.
    public init(
        serializers: [any ResponseSerializer],
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = nil
    ) {
        self.serializers = serializers
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// The first component's object, or the validated raw body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> (any Sendable)? {
        var lastError: (any Error)?
        for serializer in serializers {
            do {
                let object: any Sendable = try serializer.serialize(head: head, data: data)
                if let unwrapped = Self.unwrap(object) { return unwrapped }
            } catch {
                lastError = error
            }
        }
        if let error = validationError(head: head, data: data) {
            if case .unacceptableStatusCode(let code, let context, nil) = error, let lastError {
                throw CourierError.unacceptableStatusCode(code, context: context, underlyingError: lastError)
            }
            throw error
        }
        return data
    }

    /// `nil` for an empty `Optional`; any other value as it is (a cast such as `as? JSON` looks through the
    /// `Optional` a component's result may still be wrapped in).
    private static func unwrap(_ value: any Sendable) -> (any Sendable)? {
        if let optional = value as? any OptionalProtocol, optional.isNone { return nil }
        return value
    }
}

/// Lets a type-erased value be asked whether it is an empty `Optional`.
private protocol OptionalProtocol {
    var isNone: Bool { get }
}

extension Optional: OptionalProtocol {
    fileprivate var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}

extension CompoundResponseSerializer: HeadSerializing {}
