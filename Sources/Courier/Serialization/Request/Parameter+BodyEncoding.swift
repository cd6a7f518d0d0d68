import Foundation

extension Parameter {
    /// The tree written by `encode`, for a serializer whose format cannot hold every kind of value.
    ///
    /// - Parameters:
    ///   - unrepresentable: the values the format cannot hold; the first one found (its path named in the error)
    ///     fails the encoding before `encode` runs.
    ///   - explanation: what the format cannot hold, for the error's underlying `EncodingError`.
    ///   - reason: the failure reason of every error thrown.
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` (code -1016).
    func encodedBody(
        refusing unrepresentable: (Parameter) -> Bool, because explanation: String, reason: String,
        with encode: (Parameter) throws -> Data
    ) throws -> Data {
        if let path = firstUnrepresentable(where: unrepresentable) {
            let context = EncodingError.Context(codingPath: path, debugDescription: explanation)
            throw CourierError.parameterEncodingFailed(
                reason: reason, underlyingError: EncodingError.invalidValue(self, context))
        }
        do {
            return try encode(self)
        } catch {
            throw CourierError.parameterEncodingFailed(reason: reason, underlyingError: error)
        }
    }

    /// The coding path of the first value that `isRepresentable` rejects, depth first, or `nil` when every value
    /// is accepted.
    func firstUnrepresentable(where isUnrepresentable: (Parameter) -> Bool, path: [any CodingKey] = [])
        -> [any CodingKey]?
    {
        if isUnrepresentable(self) { return path }
        switch self {
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let childPath = path + [AnyCodingKey(intValue: index)]
                if let found = element.firstUnrepresentable(where: isUnrepresentable, path: childPath) {
                    return found
                }
            }
        case .dictionary(let dictionary):
            for (key, value) in dictionary {
                if let found = value.firstUnrepresentable(where: isUnrepresentable, path: path + [AnyCodingKey(key)]) {
                    return found
                }
            }
        default:
            break
        }
        return nil
    }
}
