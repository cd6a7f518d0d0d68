import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `curl` commands for what a session sends (see ``CURLCommand``).
extension SessionManager {
    /// A `curl` command that sends what this session would send for `request`: its own header fields, the
    /// configuration's additional ones and the cookies stored for its URL, and `--user` when the configuration's
    /// credential would answer a challenge from its origin.
    ///
    /// - Parameters:
    ///   - request: the request, as the session would be given it.
    ///   - redactingSecrets: write secrets as `REDACTED` (see `URLRequest.cURLDescription(redactingSecrets:)`).
    public func cURLDescription(of request: URLRequest, redactingSecrets: Bool = false) -> String {
        core.cURLDescription(of: request, redactingSecrets: redactingSecrets)
    }
}

extension SessionTask {
    /// A `curl` command that sends what this task sends now (its current request, with what its session adds; see
    /// ``SessionManager/cURLDescription(of:redactingSecrets:)``); the request alone once its session is gone.
    public func cURLDescription(redactingSecrets: Bool = false) -> String {
        guard let request = currentRequest else { return "curl" }
        guard let core = controller as? SessionCore else {
            return request.cURLDescription(redactingSecrets: redactingSecrets)
        }
        return core.cURLDescription(of: request, redactingSecrets: redactingSecrets)
    }
}

extension SessionCore {
    func cURLDescription(of request: URLRequest, redactingSecrets: Bool) -> String {
        guard let url = request.url else { return request.cURLDescription(redactingSecrets: redactingSecrets) }
        let headers = transportHeaders(
            HTTPRequestSerializer.sorted(request.allHTTPHeaderFields ?? [:]), url: url,
            handlesCookies: request.httpShouldHandleCookies)
        // The credential answers challenges from the task's own origin, or from its protection space (whatever the
        // realm: curl has no way to name one).
        let credential = configuration.credential.flatMap { credential in
            credential.protectionSpace?.containsOrigin(of: url) ?? true ? credential : nil
        }
        return CURLCommand.make(request, headers: headers, credential: credential, redactingSecrets: redactingSecrets)
    }
}
