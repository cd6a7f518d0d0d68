import ArgumentParser
import Foundation

/// `courier demo`: starts ``DemoServer`` on 127.0.0.1 and walks through the library against it, printing each step
/// and its result. Exits 0 when every step passes, 1 with the failing step's message otherwise.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through what Courier does, against a server started on 127.0.0.1 (no other network).")

    @Flag(help: .hidden)
    var forceProgress = false

    func run() async throws {
        let console = Console.standard(environment: ProcessInfo.processInfo.environment, forceProgress: forceProgress)
        let demo = try await Demo.start(console: console)
        let outcome = await demo.run()
        await demo.stop()
        if !outcome { throw CommandFailure(.failure, "") }
    }
}
