import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CommandFailure {
    /// The failure for an error from sending `request`: its exit status and a message that names the cause (the
    /// host, the timeout, the redirect limit, the file, the certificate…).
    init(error: any Error, request: URLRequest, timeout: TimeInterval?, maximumRedirects: Int) {
        let target = "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")"
        let hostPort = request.url.map { url in url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "") } ?? ""
        if let failure = error as? CommandFailure {
            self = failure
            return
        }
        guard let courier = error as? CourierError else {
            self.init(.failure, "\(target) failed: \(error)")
            return
        }
        switch courier {
        case .timedOut:
            let limit = timeout.map { " after \(Self.seconds($0))" } ?? ""
            self.init(.timedOut, "request timed out\(limit) waiting for \(hostPort): \(target)")
        case .tooManyRedirects(let context):
            let last = context.response?.value(forHTTPHeaderField: "Location").map { ", last Location: \($0)" } ?? ""
            self.init(
                .tooManyRedirects,
                "too many redirects: more than \(maximumRedirects) (--max-redirects) or a redirect loop, "
                    + "starting at \(target)\(last)")
        case .cannotConnect(let host, let underlying, _):
            let reason = underlying.map { ": \(Self.describe($0))" } ?? ""
            self.init(.failure, "could not connect to \(hostPort.isEmpty ? host : hostPort)\(reason) (\(target))")
        case .serverTrustEvaluationFailed(let host, let reason):
            self.init(.failure, "TLS: the certificate chain of \(host) was refused: \(reason) (\(target))")
        case .connectionLost(let underlying, _):
            let reason = underlying.map { ": \(Self.describe($0))" } ?? ""
            self.init(.failure, "the connection to \(hostPort) was lost before the response was complete\(reason)")
        case .fileOperationFailed(let reason, let underlying, _):
            let detail = underlying.map { ": \(Self.describe($0))" } ?? ""
            self.init(.failure, "\(reason)\(detail)")
        case .cancelled:
            self.init(.failure, "the request was cancelled: \(target)")
        case .invalidURL(let string):
            self.init(.failure, "“\(string)” is not a valid URL")
        case .parameterEncodingFailed(let reason, let underlying):
            let detail = underlying.map { ": \(Self.describe($0))" } ?? ""
            self.init(.failure, "the data fields cannot be encoded: \(reason)\(detail)")
        default:
            let reason = courier.failureReason.map { ": \($0)" } ?? ""
            self.init(.failure, "\(courier.errorDescription ?? "\(courier)")\(reason) (\(target))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let courier = error as? CourierError { return courier.errorDescription ?? "\(courier)" }
        return String(describing: error)
    }

    static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
