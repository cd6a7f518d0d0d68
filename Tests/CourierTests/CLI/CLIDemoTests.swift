import Foundation
import Testing

/// `courier demo` end to end: the built executable, its own server on 127.0.0.1, every step's result.
@Suite(.timeLimit(.minutes(3)))
struct CLIDemoTests {
    @Test func demoRunsEveryStepAndExitsZero() async throws {
        let result = try await CourierProcess.run(["demo"], environment: ["COURIER_FORCE_PROGRESS": "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)\nstdout: \(result.stdout)")
        let expected = [
            "a server is listening on http://127.0.0.1:",
            "query       filter%5Bsince%5D=2024&filter%5Btags%5D%5B%5D=nio&filter%5Btags%5D%5B%5D=tls&page=2&q=swift%20http",
            "received    201 Created → User(id: 1815, name: \"Ada Lovelace\", email: \"ada@example.com\")",
            "error body  validation failed: email must be an address like ada@example.com",
            "line 3      {\"event\":\"done\",\"job\":7}  → event done",
            "CourierError -1001: The request timed out.",
            "server got  parts title, file; SHA-256 of the file part",
            "Range: bytes=",
            "→ 206 Partial Content",
            "matches the server's",
            "batch: 3 of 3 finished",
            "all 3 bodies match the archive's SHA-256",
            "sent If-None-Match: \"catalog-v1\" → server 304 Not Modified",
            "[tile 4 12×8] [tile 4 12×8] [tile 5 13×8] [tile 5 13×8]",
            "16 cells, 6 distinct images → 6 requests (10 merged into downloads already under way)",
            "second pass  16 cache hits, no request",
            "received    200 over TLS; the server saw q=pinned",
            "host        127.0.0.1; reason: public-key pinning",
            "Demo finished: all 12 steps passed.",
        ]
        for line in expected {
            #expect(result.stdout.contains(line), "missing “\(line)” in:\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("✗"))
        #expect(result.stdout.components(separatedBy: "✓ passed").count - 1 == 12)
        // The progress bars went to standard error, forced since it is not a terminal here.
        #expect(result.stderr.contains("upload  [########################]  100%"))
        #expect(result.stderr.contains("archive.bin  [########################]  100%  4.0 MiB / 4.0 MiB"))
    }
}
