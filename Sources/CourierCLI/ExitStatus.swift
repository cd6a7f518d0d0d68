/// The `courier` process's exit status, as HTTPie's: scripts test these numbers.
enum ExitStatus: Int32, Sendable, Hashable {
    /// The exchange happened (whatever the status, unless `--check-status`).
    case success = 0
    /// Anything else went wrong: bad arguments, no connection, a file that cannot be read or written…
    case failure = 1
    /// The request timed out.
    case timedOut = 2
    /// Too many redirects were followed, or (with `--check-status`) a redirect was not followed.
    case tooManyRedirects = 3
    /// `--check-status` and a 4xx response.
    case clientError = 4
    /// `--check-status` and a 5xx response.
    case serverError = 5

    /// The status `--check-status` gives a response status code: 3 for an unfollowed redirect, 4 and 5 for errors.
    static func checking(statusCode: Int) -> ExitStatus {
        switch statusCode {
        case 300..<400: return .tooManyRedirects
        case 400..<500: return .clientError
        case 500..<600: return .serverError
        default: return .success
        }
    }
}
