import Testing

@testable import Courier

/// The ``CourierError`` that `body` throws; `nil`, with an issue recorded, when it returns or throws anything else.
func thrownCourierError<Value>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected a CourierError, but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
