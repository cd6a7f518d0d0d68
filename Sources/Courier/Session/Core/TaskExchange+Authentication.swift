import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The authentication step: answers a `401` challenge as ``Authentication`` and the challenge hook decide.
extension TaskExchange {
    /// Sets the `Authorization` the challenge asks for on the request, and returns `true` to send it again;
    /// `false` when the `401` is delivered as it is.
    @inline(never)
    func answerChallenge(_ response: TransportResponse, head: ResponseHead, url: URL) async throws -> Bool {
        guard head.statusCode == 401, body?.isReplayable ?? true else { return false }
        let http = try Self.http(head)
        let schemes = core.configuration.credential?.schemes ?? Credential.Scheme.all
        guard
            let challenge = Authentication.challenge(
                in: head.headers, response: http, previousFailureCount: authenticationAttempts, preferring: schemes)
        else { return false }
        let credential: Credential?
        switch hooks.authenticationChallenge?(task, challenge) ?? .performDefaultHandling {
        case .useCredential(let chosen): credential = chosen
        case .performDefaultHandling:
            // The session's credential answers only its own schemes, at the origin the task was made for (or the
            // protection space it names): never a Basic downgrade, another host, or plain http.
            credential = core.configuration.credential.flatMap { configured in
                authenticationAttempts == 0
                    && configured.answers(challenge, at: url, originalURL: task.originalRequest?.url)
                    ? configured : nil
            }
        case .rejectProtectionSpace: credential = nil
        case .cancelAuthenticationChallenge: throw CancellationError()
        }
        guard let credential else { return false }
        authenticationAttempts += 1
        request.setValue(
            Authentication.authorization(
                for: challenge, credential: credential, method: request.httpMethod ?? "GET", url: url),
            forHTTPHeaderField: "Authorization")
        await discard(response.body)
        return true
    }
}
