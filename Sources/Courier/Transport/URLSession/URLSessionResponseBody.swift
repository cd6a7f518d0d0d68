import Foundation

/// A response body being read: releasing it cancels a download nobody will read.
final class URLSessionResponseBody: Sendable {
    let id: Int
    let delegate: URLSessionTransportDelegate

    init(id: Int, delegate: URLSessionTransportDelegate) {
        self.id = id
        self.delegate = delegate
    }

    func next() async throws -> Data? {
        try await delegate.next(id)
    }

    deinit {
        delegate.discard(id)
    }
}
