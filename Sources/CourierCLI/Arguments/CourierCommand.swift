import ArgumentParser
import Courier
import Foundation

/// `courier`: the root command. `courier demo` runs the demo; anything else is a request (``RequestCommand``).
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "An HTTP client for the command line, built on the Courier library.",
        usage:
            "courier [METHOD] URL [ITEM ...] [OPTIONS]    or    courier sse URL    or    courier ws URL    or    courier demo    or    courier reachability",
        discussion: """
            Examples:
              courier :8080/get q==search X-Token:abc    GET, a query parameter, a header
              courier example.org/post name=bang n:=1    POST {"n":1,"name":"bang"} as JSON
              courier -d example.org/file.iso            download with a progress bar
              courier sse :8080/events --json            server-sent events, one JSON object per line
              courier ws wss://example.org/chat          a WebSocket: stdin lines out, messages printed
              courier demo                               a tour of the library on 127.0.0.1
              courier reachability --watch               the network's reachability, and each change
            Every request option: courier request --help
            """,
        version: versionLine,
        subcommands: [
            RequestCommand.self, EventStreamCommand.self, WebSocketCommand.self, DemoCommand.self,
            ReachabilityCommand.self,
        ],
        defaultSubcommand: RequestCommand.self)
}

extension CourierCommand {
    /// What `courier --version` prints: Courier's version and the transport requests go through (the platform's
    /// default, ``SessionManager/defaultTransport()``).
    static var versionLine: String {
        #if canImport(Darwin)
            let transport = "URLSessionTransport (Foundation's URLSession)"
        #else
            let transport = "NIOTransport (SwiftNIO and AsyncHTTPClient; HTTP/1.1, and HTTP/2 over TLS)"
        #endif
        return
            "courier \(DefaultHeaders.courierVersion), Courier \(DefaultHeaders.courierVersion), transport \(transport)"
    }
}
