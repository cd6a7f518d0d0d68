import Foundation

/// A ``WebSocketTask``'s messages as they arrive: ends after a normal close (1000), throws the
/// ``WebSocketClosedError`` of any other close, and the task's ``CourierError`` when it cannot connect.
public struct WebSocketMessages: AsyncSequence, Sendable {
    public typealias Element = WebSocketMessage

    let task: WebSocketTask

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(task: task)
    }

    /// Iterates the messages.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let task: WebSocketTask
        var ended = false

        /// The next message, or `nil` after a normal close.
        public mutating func next() async throws -> WebSocketMessage? {
            guard !ended else { return nil }
            do {
                return try await task.receive()
            } catch let closed as WebSocketClosedError where closed.code == .normalClosure {
                ended = true
                return nil
            }
        }
    }
}
