import Courier
import Vapor

/// What `GET /uuid` answers: the upstream's JSON, decoded, and the app's own field.
struct UUIDReply: Content {
    var uuid: UUID
    var via: String
}

/// What `POST /echo` sends upstream and answers with.
struct Greeting: Content, Equatable {
    var name: String
    var count: Int
}

/// The routes use Vapor's `Request`, `Response`, `HTTPHeaders` and `HTTPStatus` unqualified, next to Courier's
/// types: Courier has no public name of Vapor's.
func routes(_ app: Application, upstream: Upstream) throws {
    // A JSON GET, decoded into a model.
    app.get("uuid") { (request: Request) async throws -> UUIDReply in
        struct Upstream: Decodable, Sendable { var uuid: UUID }
        let response = try await upstream.client.get("uuid", as: Upstream.self)
        return UUIDReply(uuid: response.value.uuid, via: "courier \(response.statusCode)")
    }

    // A streamed download passed through to the client as it arrives, never whole in memory.
    app.get("download", ":count") { (request: Request) async throws -> Response in
        guard let count = request.parameters.get("count", as: Int.self), (0...10_000_000).contains(count) else {
            throw Abort(HTTPStatus.badRequest, reason: "count: a number of bytes up to 10,000,000")
        }
        let streamed = try await upstream.client.stream("range/\(count)")
        var headers = HTTPHeaders()
        headers.contentType = .binary
        let body = Response.Body(
            asyncStream: { writer in
                do {
                    for try await chunk in streamed.chunks {
                        try await writer.writeBuffer(ByteBuffer(bytes: chunk))
                    }
                    try await writer.write(.end)
                } catch {
                    try await writer.write(.error(error))
                }
            }, count: count)
        return Response(status: .ok, headers: headers, body: body)
    }

    // A POST with a JSON body, retried by the session's policy when the upstream fails with 5xx.
    app.post("echo") { (request: Request) async throws -> Greeting in
        let greeting = try request.content.decode(Greeting.self)
        struct Echo: Decodable, Sendable { var json: Greeting }
        do {
            let echoed = try await upstream.client.post(
                "anything", parameters: ["name": .string(greeting.name), "count": .int(greeting.count)],
                as: Echo.self)
            return echoed.value.json
        } catch let error as CourierError {
            throw Abort(HTTPStatus.badGateway, reason: "upstream: \(error.localizedDescription)")
        }
    }
}
