import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``AuthenticationInterceptor`` against a server that accepts only the current token (`Bearer token-<n>`, where a
/// `POST /refresh` moves `n` on) and counts the refreshes that reach it.
@Suite(.timeLimit(.minutes(1)))
struct AuthenticationInterceptorTests {
    struct Token: AuthenticationCredential {
        var value: String
        var requiresRefresh = false
    }

    /// Refreshes by asking the server's `/refresh`, which answers the new token in its body, or 500 when told to
    /// fail.
    struct TokenAuthenticator: CredentialAuthenticator {
        let refreshURL: URL
        let client = HTTPSessionManager(configuration: .ephemeral)

        func apply(_ credential: Token, to request: inout URLRequest) {
            request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: Token, for task: SessionTask) async throws -> Token {
            var request = URLRequest(url: refreshURL)
            request.httpMethod = "POST"
            let response = try await client.send(request, serializer: StringResponseSerializer())
            return Token(value: response.value)
        }

        func didRequest(
            _ request: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError
        ) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }
    }

    /// The server: `/refresh` issues the next token (slowly, so the 401s pile up behind one refresh), or 500 while
    /// `refreshFails`; anything else is 200 with the current token, 401 with another.
    static func server(refreshFails: Bool = false, current: Int = 1) async throws -> ScriptedServer {
        let token = Locked(current)
        return try await ScriptedServer.start { _, request in
            if request.path == "/refresh" {
                if refreshFails { return .init(status: 500, body: "refresh refused", delay: 0.2) }
                let next = token.withLock { value -> Int in
                    value += 1
                    return value
                }
                return .init(status: 200, body: "token-\(next)", delay: 0.2)
            }
            let accepted = token.withLock { "Bearer token-\($0)" }
            return request.headers["authorization"] == accepted
                ? .init(status: 200, body: "hello") : .init(status: 401, body: "who are you")
        }
    }

    static func client(_ interceptor: AuthenticationInterceptor<TokenAuthenticator>, transport: String)
        -> HTTPSessionManager
    {
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = interceptor
        return HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
    }

    @Test("20 requests with an expired token: one refresh, 20 successes", arguments: TestTransports.names)
    func oneRefreshForManyFailures(transport: String) async throws {
        let server = try await Self.server()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(refreshURL: server.url("refresh")), credential: Token(value: "token-0"))
        let client = Self.client(interceptor, transport: transport)
        let bodies = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await client.send(
                        URLRequest(url: server.url("item/\(index)")), serializer: StringResponseSerializer()
                    ).value
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 20)
        #expect(bodies.allSatisfy { $0 == "hello" })
        #expect(server.received.filter { $0.path == "/refresh" }.count == 1)
        #expect(interceptor.credential?.value == "token-2")
        try await server.stop()
    }

    @Test("A failing refresh fails every waiting request with its error, and is not run twice")
    func failedRefresh() async throws {
        let server = try await Self.server(refreshFails: true)
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(refreshURL: server.url("refresh")), credential: Token(value: "token-0"))
        let client = Self.client(interceptor, transport: "NIOTransport")
        let errors = await withTaskGroup(of: CourierError?.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do {
                        _ = try await client.send(
                            URLRequest(url: server.url("item/\(index)")), serializer: StringResponseSerializer())
                        return nil
                    } catch {
                        return error as? CourierError
                    }
                }
            }
            return await group.reduce(into: [CourierError?]()) { $0.append($1) }
        }
        #expect(errors.count == 20)
        #expect(
            errors.allSatisfy { $0?.response?.statusCode == 500 && $0?.responseData == Data("refresh refused".utf8) })
        #expect(server.received.filter { $0.path == "/refresh" }.count == 1)
        try await server.stop()
    }

    @Test("A credential that requires a refresh is refreshed before the request goes out")
    func proactiveRefresh() async throws {
        let server = try await Self.server()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(refreshURL: server.url("refresh")),
            credential: Token(value: "token-1", requiresRefresh: true))
        let client = Self.client(interceptor, transport: "NIOTransport")
        let response = try await client.send(URLRequest(url: server.url("me")), serializer: StringResponseSerializer())
        #expect(response.value == "hello")
        #expect(server.received.map(\.path) == ["/refresh", "/me"])
        #expect(server.received.last?.headers["authorization"] == "Bearer token-2")
        try await server.stop()
    }

    @Test("Refreshing past the window's limit fails with excessiveRefresh")
    func excessiveRefresh() async throws {
        // The server never accepts what it issues: every refresh is followed by another 401.
        let server = try await ScriptedServer.start { _, request in
            request.path == "/refresh" ? .init(status: 200, body: "useless") : .init(status: 401)
        }
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(refreshURL: server.url("refresh")), credential: Token(value: "x"),
            refreshWindow: .init(interval: .seconds(30), maximumAttempts: 3))
        let client = Self.client(interceptor, transport: "NIOTransport")
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: server.url("me")), serializer: StringResponseSerializer())
        }
        #expect(error?.underlyingError as? AuthenticationError == .excessiveRefresh)
        #expect(server.received.filter { $0.path == "/refresh" }.count == 3)
        try await server.stop()
    }

    @Test("Without a credential the request is not sent")
    func missingCredential() async throws {
        let server = try await Self.server()
        let interceptor = AuthenticationInterceptor<TokenAuthenticator>(
            authenticator: TokenAuthenticator(refreshURL: server.url("refresh")))
        let client = Self.client(interceptor, transport: "NIOTransport")
        let error = await thrownCourierError {
            _ = try await client.send(URLRequest(url: server.url("me")), serializer: StringResponseSerializer())
        }
        #expect(error?.underlyingError as? AuthenticationError == .missingCredential)
        #expect(server.received.isEmpty)
        try await server.stop()
    }
}
