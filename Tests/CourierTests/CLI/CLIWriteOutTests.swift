import Courier
import CourierFixtures
import Foundation
import Testing

@testable import CourierCLI

/// curl's `-w/--write-out FORMAT` and HTTPie's `--meta`: what the transfer took, after the body, from Courier's task
/// metrics.
struct CLIWriteOutTests {
    @Test func writeOutFillsCurlsVariables() async throws {
        let server = try await ScriptedServer.start([.init(status: 201, body: "twelve bytes")])
        let result = try await CourierProcess.run([
            "--print", "b", "-w",
            "\\n%{http_code} %{size_download} %{remote_ip} %{time_connect} %{time_starttransfer} %{time_total} %%\\n",
            server.url("w").absoluteString,
        ])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "twelve bytes")
        let fields = try #require(lines.dropFirst().first).split(separator: " ").map(String.init)
        #expect(fields.count == 7, "stdout: \(result.stdout)")
        guard fields.count == 7 else { return }
        #expect(fields[0] == "201")
        #expect(fields[1] == "12")
        #expect(fields[2] == "127.0.0.1")
        let times = fields[3...5].compactMap(Double.init)
        #expect(times.count == 3)
        #expect(times.allSatisfy { $0 >= 0 && $0 < 30 })
        #expect(times[0] <= times[1] && times[1] <= times[2], "connect ≤ first byte ≤ total: \(times)")
        #expect(fields[6] == "%")
    }

    @Test func appconnectIsZeroWithoutTLS() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([
            "--print", "", "-w", "%{time_connect} %{time_appconnect}", server.url("w").absoluteString,
        ])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let fields = result.stdout.split(separator: " ").map(String.init)
        #expect(fields.count == 2 && fields[1] == "0.000000", "stdout: \(result.stdout)")
        #expect((Double(fields.first ?? "") ?? 0) > 0, "stdout: \(result.stdout)")
    }

    @Test func overTLSConnectIsTheTCPPartAndAppconnectTheHandshake() async throws {
        let chain = try await OffPool.run { try CertificateChain.make(name: "CLI write-out") }
        let server = try await NginxTLS.start(chainPEM: chain.fullChainPEM, keyPEM: chain.leaf.privateKeyPEM)
        defer { server.stopInBackground() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-write-out-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try chain.write(to: folder)
        let trust = ["--cacert", files.root.path]
        let written = try await CourierProcess.run(
            trust + [
                "--print", "", "-w", "%{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}",
                server.baseURL.absoluteString,
            ])
        #expect(written.status == 0, "stderr: \(written.stderr)")
        let times = written.stdout.split(separator: " ").compactMap { Double($0) }
        #expect(times.count == 4, "stdout: \(written.stdout)")
        if times.count == 4 {
            // The command's streamed response goes over AsyncHTTPClient's connections, which do not show the TCP step
            // apart from the handshake: time_connect is then when the connection was ready (see
            // connectIsTheTCPPartWhenTheTransportSawIt).
            #expect(times[0] > 0 && times[1] > 0, "a new connection, and TLS was used: \(times)")
            #expect(
                times[0] <= times[1] && times[1] <= times[2] && times[2] <= times[3],
                "connect ≤ appconnect ≤ starttransfer ≤ total: \(times)")
        }

        let meta = try await CourierProcess.run(trust + ["--print", "b", "--meta", server.baseURL.absoluteString])
        #expect(meta.status == 0, "stderr: \(meta.stderr)")
        #expect(meta.stdout.contains("new connection"), "stdout: \(meta.stdout)")
        #expect(meta.stdout.contains("TLS handshake done (TLSv1."), "stdout: \(meta.stdout)")
        #expect(meta.stdout.contains("first byte: "), "stdout: \(meta.stdout)")
    }

    @Test func connectIsTheTCPPartWhenTheTransportSawIt() throws {
        let start = Date(timeIntervalSince1970: 1_000)
        var exchange = TransactionMetrics(method: "GET", url: try #require(URL(string: "https://example.test/")))
        exchange.connectStartDate = start
        exchange.secureConnectionStartDate = start + 0.010
        exchange.secureConnectionEndDate = start + 0.030
        exchange.connectEndDate = start + 0.030
        exchange.negotiatedTLSProtocolVersion = "TLSv1.3"
        exchange.responseStartDate = start + 0.040
        func metrics(_ exchange: TransactionMetrics) -> TaskMetrics {
            TaskMetrics(
                taskInterval: DateInterval(start: start, duration: 0.050), redirectCount: 0, exchangeCount: 1,
                countOfBytesSent: 0, countOfBytesReceived: 2, transactionMetrics: [exchange])
        }
        let format = "%{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}"
        #expect(
            TransferSummary.writeOut(format, metrics: metrics(exchange), status: 200).text
                == "0.010000 0.030000 0.040000 0.050000")
        let meta = TransferSummary.meta(metrics(exchange))
        #expect(meta.contains("connected (new connection): 0.010s · TLS handshake done (TLSv1.3): 0.030s"), "\(meta)")

        // A connection that tells only when it was ready: time_connect is that moment, the handshake in it (the
        // nearest it has; 0 would read as no new connection), and --meta shows no TCP phase.
        var readyOnly = exchange
        readyOnly.connectStartDate = nil
        readyOnly.secureConnectionStartDate = nil
        #expect(
            TransferSummary.writeOut(format, metrics: metrics(readyOnly), status: 200).text
                == "0.030000 0.030000 0.040000 0.050000")
        #expect(TransferSummary.meta(metrics(readyOnly)).contains("new connection · TLS handshake done (TLSv1.3)"))

        // Plain http: the connection ready is the TCP part, and appconnect is 0, as curl has it.
        var plain = exchange
        plain.secureConnectionStartDate = nil
        plain.secureConnectionEndDate = nil
        plain.negotiatedTLSProtocolVersion = nil
        #expect(
            TransferSummary.writeOut(format, metrics: metrics(plain), status: 200).text
                == "0.030000 0.000000 0.040000 0.050000")
        #expect(!TransferSummary.meta(metrics(plain)).contains("TLS"))
    }

    @Test func anUnknownVariableIsEmptyWithAWarning() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([
            "--print", "", "-w", "[%{nonsense}]", server.url("w").absoluteString,
        ])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "[]")
        #expect(result.stderr.contains("unknown variable %{nonsense}"), "stderr: \(result.stderr)")
    }

    @Test func metaPrintsTheElapsedTimeAndPhasesAfterTheBody() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "body")])
        let result = try await CourierProcess.run(["--print", "b", "--meta", server.url("m").absoluteString])
        try await server.stop()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasPrefix("body"))
        #expect(result.stdout.contains("Elapsed time: "), "stdout: \(result.stdout)")
        #expect(result.stdout.contains("connected (new connection): "))
        #expect(!result.stdout.contains("TLS handshake"), "stdout: \(result.stdout)")
        #expect(result.stdout.contains("first byte: "))
        #expect(result.stdout.contains("total: "))
    }
}
