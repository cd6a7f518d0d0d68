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
        guard head.statusCode == 401, body?.isReplayable ?? true || hooks.needNewBodyStream != nil else {
            return false
        }
        let http = try Self.http(head)
        let configured = delegate.taskHooks?.credential ?? core.configuration.credential
        let schemes = configured?.schemes ?? Credential.Scheme.all
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
            credential =
                configured.flatMap { configured in
                    authenticationAttempts == 0
                        && configured.answers(challenge, at: url, originalURL: task.originalRequest?.url)
                        ? configured : nil
                } ?? storedCredential(for: challenge, at: url, schemes: schemes)
        case .rejectProtectionSpace: credential = nil
        case .cancelAuthenticationChallenge: throw CancellationError()
        }
        // Asked last: the hook makes a new body only for a request that goes out again.
        guard let credential, bodyCanGoAgain() else { return false }
        authenticationAttempts += 1
        request.setValue(
            Authentication.authorization(
                for: challenge, credential: credential, method: request.httpMethod ?? "GET", url: url),
            forHTTPHeaderField: "Authorization")
        await discard(response.body)
        return true
    }

    /// The credential ``SessionConfiguration/urlCredentialStorage`` keeps for the challenge's protection space, for
    /// a first attempt, in one of `schemes`.
    private func storedCredential(for challenge: AuthenticationChallenge, at url: URL, schemes: Set<Credential.Scheme>)
        -> Credential?
    {
        guard authenticationAttempts == 0, let storage = core.configuration.urlCredentialStorage,
            let scheme = Credential.Scheme(rawValue: challenge.scheme.lowercased()), schemes.contains(scheme),
            let host = url.host, let urlScheme = url.scheme?.lowercased()
        else { return nil }
        let port = url.port ?? URLCheck.defaultPort(scheme: urlScheme)
        let method = scheme == .digest ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic
        // Matched field by field: swift-corelibs-foundation's URLProtectionSpace compares by identity, so asking the
        // storage with a space of our own finds nothing there.
        guard
            let space = storage.allCredentials.keys.first(where: { stored in
                stored.host.lowercased() == host.lowercased() && stored.port == port
                    && stored.protocol?.lowercased() == urlScheme && stored.realm == challenge.realm
                    && stored.authenticationMethod == method && !stored.isProxy()
            }),
            let stored = storage.defaultCredential(for: space),
            let user = stored.user, let password = stored.password
        else { return nil }
        return Credential(user: user, password: password, schemes: [scheme])
    }
}
