import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The code samples of Sources/Courier/Courier.docc/Testing.md, between `// sample: NAME` and `// end sample`, appear
// in the article verbatim (checked by `articleShowsEverySampleVerbatim`); the tests below run them, the recording
// against httpbin.

// sample: client
/// The code under test: an API client that takes its session from outside.
struct WeatherClient {
    let manager: HTTPSessionManager

    struct Forecast: Decodable, Sendable {
        var city: String
        var celsius: Double
    }

    func forecast(for city: String) async throws -> Forecast {
        try await manager.get("forecast", parameters: ["city": .string(city)], as: Forecast.self).value
    }
}
// end sample

// sample: stub
/// A test with stubs: no server, every request answered from rules, and the requests checked afterwards.
func forecastWithStubs() async throws -> (WeatherClient.Forecast, [StubbedRequest]) {
    let stubs = StubTransport()
    stubs.stub(
        StubMatcher.get("https://weather.example/v2/forecast").query("city", "Oslo"),
        with: .json(#"{"city":"Oslo","celsius":-3.5}"#))
    // Anything else the client asks for fails, with the closest rules named in the error.
    let manager = HTTPSessionManager(
        baseURL: URL(string: "https://weather.example/v2/"), configuration: .ephemeral, transport: stubs)
    defer { manager.invalidate(cancelingTasks: true) }
    let forecast = try await WeatherClient(manager: manager).forecast(for: "Oslo")
    return (forecast, stubs.requests)
}
// end sample

// sample: record
/// Record once against the real server (here: whatever `transport` reaches), then replay from the file in every
/// later run, with no server at all.
func recordThenReplay(server: URL, transport: any Transport, file: URL) async throws -> (Data, Data) {
    let recorder = RecordingTransport(wrapping: transport, file: file)  // Authorization, cookies: REDACTED
    let live = HTTPSessionManager(baseURL: server, configuration: .ephemeral, transport: recorder)
    let recorded = try await live.send("GET", "json", serializer: HTTPResponseSerializer())
    live.invalidate(cancelingTasks: true)
    await recorder.shutdown()

    let replay = try ReplayTransport(contentsOf: file, strict: true)
    let offline = HTTPSessionManager(baseURL: server, configuration: .ephemeral, transport: replay)
    defer { offline.invalidate(cancelingTasks: true) }
    let replayed = try await offline.send("GET", "json", serializer: HTTPResponseSerializer())
    try replay.verifyAllPlayed()  // strict: every recorded exchange was asked for
    return (recorded.data, replayed.data)
}
// end sample

// sample: faults
/// Does the app's retry policy survive a flaky network? Two failed attempts, then the real server answers.
func survivesTwoLostConnections(server: URL, transport: any Transport) async throws -> Int {
    let faulty = FaultInjectingTransport(
        wrapping: transport,
        faults: [
            .failFirst(2, with: .connectionLost),
            .slowChunks(every: .milliseconds(10)),
        ])
    var configuration = SessionConfiguration.ephemeral
    var retries = RetryPolicy()
    retries.exponentialBackoffScale = 0.01
    configuration.interceptor = retries
    let manager = HTTPSessionManager(baseURL: server, configuration: configuration, transport: faulty)
    defer { manager.invalidate(cancelingTasks: true) }
    _ = try await manager.send("GET", "get", serializer: HTTPResponseSerializer())
    return faulty.requestCount  // 3
}
// end sample

@Suite struct TestingArticleTests {
    @Test func stubSampleRuns() async throws {
        let (forecast, requests) = try await forecastWithStubs()
        #expect(forecast.city == "Oslo" && forecast.celsius == -3.5)
        #expect(requests.map(\.url.absoluteString) == ["https://weather.example/v2/forecast?city=Oslo"])
    }

    @Test func recordSampleRuns() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("article-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let (recorded, replayed) = try await recordThenReplay(
            server: try await HTTPBin.shared.url(), transport: NIOTransport(), file: file)
        #expect(!recorded.isEmpty && recorded == replayed)
    }

    @Test func faultsSampleRuns() async throws {
        #expect(
            try await survivesTwoLostConnections(server: try await HTTPBin.shared.url(), transport: NIOTransport()) == 3
        )
    }

    @Test func articleShowsEverySampleVerbatim() throws {
        try DocumentationSamples.check(test: #filePath, article: "Testing.md", expected: 4)
    }
}
