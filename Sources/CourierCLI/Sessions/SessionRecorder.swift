import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hears every response a `courier --session` request gets (redirects included), for the cookies they set.
final class SessionRecorder: EventMonitor, @unchecked Sendable {
    // @unchecked: the only state is behind its lock.
    private let responses = LockedValue<[(URL, [String: String])]>([])
    private let completed = LockedValue(false)

    /// The responses so far: each one's URL and header fields.
    var recorded: [(URL, [String: String])] { responses.withLock { $0 } }

    func task(_ task: SessionTask, didReceiveResponse response: HTTPURLResponse) {
        record(response)
    }

    func task(_ task: SessionTask, willRedirectWith response: HTTPURLResponse, to request: URLRequest) {
        record(response)
    }

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        completed.withLock { $0 = true }
    }

    /// Returns once the task has completed (monitors hear of it after the body is out), or after 2 s.
    func waitUntilCompleted() async {
        let deadline = ContinuousClock.now + .seconds(2)
        while !completed.withLock({ $0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    private func record(_ response: HTTPURLResponse) {
        guard let url = response.url else { return }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String { fields[name] = "\(value)" }
        }
        responses.withLock { $0.append((url, fields)) }
    }
}
