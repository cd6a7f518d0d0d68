import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The limits a transfer ran under, for the messages of its failures.
struct TransferLimits: Sendable {
    /// `--timeout`: the idle timeout.
    var timeout: TimeInterval?
    /// `--max-time`: the deadline for the whole transfer.
    var maxTime: TimeInterval?
    /// `--max-redirects`.
    var maximumRedirects: Int
    /// When the transfer started, to tell which of the two time limits ran out.
    var started: ContinuousClock.Instant = .now
}

extension CommandFailure {
    /// The failure for an error from sending `request`: its exit status and a message that names the cause (the
    /// host, the timeout, the redirect limit, the file, the certificate…).
    ///
    /// When the error carries the request that failed (a hop after a redirect), that request is named rather than
    /// the one first sent.
    init(error: any Error, request original: URLRequest, limits: TransferLimits) {
        if let failure = error as? CommandFailure {
            self = failure
            return
        }
        let request = (error as? CourierError)?.request ?? original
        let target = "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")"
        let hostPort = request.url.map { url in url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "") } ?? ""
        guard let courier = error as? CourierError else {
            self.init(.failure, "\(target) failed: \(error)")
            return
        }
        switch courier {
        case .timedOut:
            // The library reports both limits as one error; a transfer that ran as long as --max-time hit it.
            if let maxTime = limits.maxTime, ContinuousClock.now - limits.started >= .seconds(maxTime) {
                self.init(
                    .timedOut,
                    "the transfer did not finish within --max-time \(TimeLimit.describe(maxTime)): \(target)")
                return
            }
            let limit = limits.timeout.map { " after \(TimeLimit.describe($0))" } ?? ""
            self.init(.timedOut, "request timed out\(limit) waiting for \(hostPort): \(target)")
        case .tooManyRedirects(let context):
            let last = context.response?.value(forHTTPHeaderField: "Location").map { ", last Location: \($0)" } ?? ""
            let start = "\(original.httpMethod ?? "GET") \(original.url?.absoluteString ?? "")"
            self.init(
                .tooManyRedirects,
                "too many redirects: more than \(limits.maximumRedirects) (--max-redirects) or a redirect loop, "
                    + "starting at \(start)\(last)")
        case .cannotConnect(let host, let underlying, _):
            self.init(
                .failure,
                "could not connect to \(hostPort.isEmpty ? host : hostPort)\(Self.detail(underlying)) (\(target))")
        case .serverTrustEvaluationFailed(let host, let reason):
            self.init(.failure, "TLS: the certificate chain of \(host) was refused: \(reason) (\(target))")
        case .connectionLost(let underlying, _):
            self.init(
                .failure,
                "the connection to \(hostPort) was lost before the response was complete\(Self.detail(underlying))")
        case .fileOperationFailed(let reason, let underlying, _):
            self.init(.failure, "\(reason)\(Self.detail(underlying))")
        case .cancelled:
            self.init(.failure, "the request was cancelled: \(target)")
        case .invalidURL(let string):
            self.init(.failure, "“\(string)” is not a valid URL")
        case .parameterEncodingFailed(let reason, let underlying):
            self.init(.failure, "the data fields cannot be encoded: \(reason)\(Self.detail(underlying))")
        case .insecureRedirect(let from, let to, _):
            self.init(
                .failure,
                "refused to follow a redirect from \(from.absoluteString) to \(to.absoluteString): it would leave "
                    + "TLS; use --allow-insecure-redirects to follow it")
        case .unsupportedURL(let url, let reason, _):
            let scheme = url.scheme.map { "the scheme “\($0)” is not supported" } ?? "the URL has no scheme"
            self.init(
                .failure,
                "\(url.absoluteString): \(scheme) (\(reason)); courier sends http and https requests only, and "
                    + "follows redirects only to http and https URLs")
        case .proxyFailed(let proxy, let authentication, let reason, let underlying, _):
            let advice = authentication ? "; give its user and password in --proxy http://user:password@host:port" : ""
            self.init(.failure, "the proxy \(proxy) failed \(target): \(reason)\(Self.detail(underlying))\(advice)")
        case .badServerResponse(let reason, let underlying, _):
            self.init(.failure, "bad response from \(hostPort): \(reason)\(Self.detail(underlying)) (\(target))")
        default:
            let reason = courier.failureReason.map { ": \($0)" } ?? ""
            self.init(.failure, "\(courier.errorDescription ?? "\(courier)")\(reason) (\(target))")
        }
    }

    /// `": "` and the underlying error's description, or nothing without one.
    private static func detail(_ underlying: (any Error)?) -> String {
        underlying.map { ": \(describe($0))" } ?? ""
    }

    private static func describe(_ error: any Error) -> String {
        if let courier = error as? CourierError { return courier.errorDescription ?? "\(courier)" }
        return String(describing: error)
    }
}
