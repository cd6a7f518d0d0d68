import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// The connection dates a new TLS connection of ``NIOTransport``'s own reports in its first exchange's metrics
/// (Alamofire's `URLSessionTaskMetrics` readers expect them): connecting, the TLS handshake's start and end, in
/// order, before the request; a reused connection reports none.
@Suite(.timeLimit(.minutes(1)))
struct NIOConnectionMetricsTests {
    static let chain: CertificateChain = {
        do { return try CertificateChain.make(name: "connection metrics") } catch {
            fatalError("certificates: \(error)")
        }
    }()

    @Test(
        "connectStart ≤ secureConnectionStart ≤ secureConnectionEnd ≤ connectEnd ≤ requestStart, over HTTP/1.1 and HTTP/2",
        arguments: [false, true])
    func tlsDates(http2: Bool) async throws {
        let server = try await NginxTLS.start(chainPEM: Self.chain.fullChainPEM, keyPEM: Self.chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = true
        configuration.allowsHTTP2 = http2
        let transport = NIOTransport(configuration: configuration)
        var request = TransportRequest(method: "GET", url: server.baseURL)
        request.securityPolicy.additionalTrustedCertificates = [Self.chain.root.der]
        let first = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
        let metrics = try #require(first.metrics)
        #expect(metrics.networkProtocolName == (http2 ? "h2" : "http/1.1"))
        let connectStart = try #require(metrics.connectStartDate)
        let secureStart = try #require(metrics.secureConnectionStartDate)
        let secureEnd = try #require(metrics.secureConnectionEndDate)
        let connectEnd = try #require(metrics.connectEndDate)
        let requestStart = try #require(metrics.requestStartDate)
        #expect(connectStart <= secureStart && secureStart <= secureEnd && secureEnd <= connectEnd)
        #expect(connectEnd <= requestStart)
        #expect(metrics.negotiatedTLSProtocolVersion != nil && !metrics.isReusedConnection)
        let second = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
        #expect(second.metrics?.isReusedConnection == true)
        #expect(second.metrics?.secureConnectionStartDate == nil && second.metrics?.connectStartDate == nil)
        await transport.shutdown()
    }
}
