import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task's request: Foundation's `URLRequest`, or the plain request (see ``HTTPRequestSerializer``'s
/// `plainRequest(method:url:parameters:)`) that one is made from only when something asks for it.
///
/// The common `async` call sends a plain request and reads back only its URL, method, cookie flag and timeout; those
/// are answered here without Foundation. ``make()`` gives the `URLRequest` a task reports, equal on every call.
enum TaskRequest: Sendable {
    case made(URLRequest?)
    case plain(PlainRequest, HTTPRequestSerializer)

    /// Foundation's request.
    func make() -> URLRequest? {
        switch self {
        case .made(let request): request
        case .plain(let plain, let serializer): serializer.request(from: plain)
        }
    }

    /// Foundation's request when this is one; `nil` for a plain request (still the task's original).
    var made: URLRequest? {
        guard case .made(let request) = self else { return nil }
        return request
    }

    var url: URL? {
        switch self {
        case .made(let request): request?.url
        case .plain(let plain, _): plain.url
        }
    }

    /// The method as set (`GET` when none is).
    var method: String {
        switch self {
        case .made(let request): request?.httpMethod ?? "GET"
        case .plain(let plain, _): plain.method
        }
    }

    /// `URLRequest.httpShouldHandleCookies`.
    var handlesCookies: Bool {
        switch self {
        case .made(let request): request?.httpShouldHandleCookies ?? true
        case .plain(let plain, _): plain.handlesCookies
        }
    }

    /// `URLRequest.httpBody` (a plain request has none).
    var httpBody: Data? {
        switch self {
        case .made(let request): request?.httpBody
        case .plain: nil
        }
    }

    /// `URLRequest.timeoutInterval` when one was set on the request or its serializer; `nil` for the default.
    var timeoutInterval: TimeInterval? {
        let interval =
            switch self {
            case .made(let request): request?.timeoutInterval
            case .plain(_, let serializer): serializer.timeoutInterval
            }
        return interval == Self.defaultTimeoutInterval ? nil : interval
    }

    /// A new `URLRequest`'s timeout.
    static let defaultTimeoutInterval: TimeInterval = {
        guard let url = URL(string: "http://localhost") else { return 60 }
        return URLRequest(url: url).timeoutInterval
    }()
}
