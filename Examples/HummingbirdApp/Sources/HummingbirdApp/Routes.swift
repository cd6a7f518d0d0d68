import Courier
import Foundation
import Hummingbird

/// What `GET /uuid` answers: the upstream's JSON, decoded, and the app's own field.
struct UUIDReply: ResponseCodable {
    var uuid: UUID
    var via: String
}

/// What `POST /echo` sends upstream and answers with.
struct Greeting: ResponseCodable, Equatable {
    var name: String
    var count: Int
}

/// The routes use Hummingbird's `Request`, `Response`, `ResponseBody` and `HTTPFields` unqualified, next to Courier's
/// types: Courier has no public name of Hummingbird's.
func routes(_ router: Router<BasicRequestContext>, upstream: Upstream) {
    // A JSON GET, decoded into a model.
    router.get("uuid") { (request: Request, context: BasicRequestContext) async throws -> UUIDReply in
        struct Upstream: Decodable, Sendable { var uuid: UUID }
        let response = try await upstream.client.get("uuid", as: Upstream.self)
        return UUIDReply(uuid: response.value.uuid, via: "courier \(response.statusCode)")
    }

    // A streamed download passed through to the client as it arrives, never whole in memory.
    router.get("download/{count}") { (request: Request, context: BasicRequestContext) async throws -> Response in
        guard let count = context.parameters.get("count", as: Int.self), (0...10_000_000).contains(count) else {
            throw HTTPError(.badRequest, message: "count: a number of bytes up to 10,000,000")
        }
        let streamed = try await upstream.client.stream("range/\(count)")
        let body = ResponseBody(contentLength: count) { writer in
            for try await chunk in streamed.chunks {
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
        let headers: HTTPFields = [.contentType: "application/octet-stream"]
        return Response(status: .ok, headers: headers, body: body)
    }

    // A POST with a JSON body, retried by the session's policy when the upstream fails with 5xx.
    router.post("echo") { (request: Request, context: BasicRequestContext) async throws -> Greeting in
        let greeting = try await request.decode(as: Greeting.self, context: context)
        struct Echo: Decodable, Sendable { var json: Greeting }
        do {
            let echoed = try await upstream.client.post(
                "anything", parameters: ["name": .string(greeting.name), "count": .int(greeting.count)],
                as: Echo.self)
            return echoed.value.json
        } catch let error as CourierError {
            throw HTTPError(.badGateway, message: "upstream: \(error.localizedDescription)")
        }
    }
}
