import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Timeouts a caller may set to anything a `Double` holds: infinite and huge ones mean "no limit" (clamped to
/// ``CheckedConversion/maximumMilliseconds``) and never trap; zero, negative and NaN ones leave no time, so the task
/// fails with -1001 at the session's first timeout check. Each case runs on both transports through a real session
/// against a ``FaultServer`` on 127.0.0.1.
@Suite("Timeout values", .serialized, .timeLimit(.minutes(2)))
struct TimeoutValueTests {
    /// Where the timeout is set.
    enum Setting: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case request = "timeoutIntervalForRequest"
        case resource = "timeoutIntervalForResource"
        case urlRequest = "URLRequest.timeoutInterval"

        var testDescription: String { rawValue }

        /// A configuration and a request to `url` with `value` set here.
        func apply(_ value: TimeInterval, url: URL) -> (SessionConfiguration, URLRequest) {
            var configuration = SessionConfiguration.ephemeral
            var request = URLRequest(url: url)
            switch self {
            case .request: configuration.timeoutIntervalForRequest = value
            case .resource: configuration.timeoutIntervalForResource = value
            case .urlRequest: request.timeoutInterval = value
            }
            return (configuration, request)
        }
    }

    /// A setting and the value it gets.
    struct Case: Sendable, CustomTestStringConvertible {
        var setting: Setting
        var value: TimeInterval
        var testDescription: String { "\(setting.rawValue) = \(value)" }

        static func all(_ values: [TimeInterval]) -> [Case] {
            Setting.allCases.flatMap { setting in values.map { Case(setting: setting, value: $0) } }
        }
    }

    static let unlimited = Case.all([.infinity, 1e300, .greatestFiniteMagnitude])
    static let noTime = Case.all([-1, -.infinity, .nan])

    @Test("An infinite or huge timeout neither traps nor fails a GET", arguments: FaultTransportKind.all, unlimited)
    func unlimitedTimeout(_ kind: FaultTransportKind, _ timeout: Case) async throws {
        let server = try await FaultServer.start(.respond(FaultServer.ok("fine"), close: false))
        let (configuration, request) = timeout.setting.apply(timeout.value, url: server.baseURL)
        try await withSession(server, kind, configuration: configuration) { manager in
            // The async API (a collected exchange) …
            let response = try await manager.send(request, serializer: HTTPResponseSerializer())
            #expect(response.statusCode == 200)
            #expect(response.value.map { String(decoding: $0, as: UTF8.self) } == "fine")
            // … and a task of the callback API (a runner of its own).
            let outcome = Locked<(object: Data?, error: (any Error)?)?>(nil)
            manager.responseSerializer = HTTPResponseSerializer()
            let task = manager.dataTask(with: request) { _, object, error in
                outcome.withLock { $0 = (object as? Data, error) }
            }
            task.resume()
            try await waitUntil { outcome.withLock { $0 != nil } }
            #expect(outcome.withLock { $0?.error } == nil)
            #expect(outcome.withLock { $0?.object }.map { String(decoding: $0, as: UTF8.self) } == "fine")
        }
        #expect(server.requestCount == 2)
    }

    @Test(
        "A negative or NaN timeout leaves no time: -1001 at once, not a trap or a wait",
        arguments: FaultTransportKind.all, noTime)
    func noTimeTimeout(_ kind: FaultTransportKind, _ timeout: Case) async throws {
        // A server that never answers: only the timeout can end the task.
        let server = try await FaultServer.start(.slow(headAfter: nil))
        let (configuration, request) = timeout.setting.apply(timeout.value, url: server.baseURL)
        try await withSession(server, kind, configuration: configuration) { manager in
            let clock = ContinuousClock()
            let start = clock.now
            let error = await thrownCourierError {
                try await manager.send(request, serializer: HTTPResponseSerializer())
            }
            #expect(error?.errorCode == -1001, "\(String(describing: error))")
            // The session checks timeouts at least every 250 ms; the defaults would wait 60 s or 7 days.
            #expect(clock.now - start < .seconds(3))
        }
    }
}
