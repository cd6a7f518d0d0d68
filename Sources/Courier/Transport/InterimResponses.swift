/// What every transport accepts of the 1xx heads before a final response.
///
/// A transport's HTTP requests cannot switch protocols (WebSockets open connections of their own), so a
/// `101 Switching Protocols` is never an answer, even to a request whose caller set `Upgrade` itself: what follows it
/// is another protocol, and taking it for the final response would let a task succeed with whatever those bytes
/// are. Other 1xx heads (`100 Continue`, `103 Early Hints`) are skipped, but not without end: a server could
/// otherwise hold a request with them forever.
enum InterimResponses {
    /// The most informational heads accepted before one final response; a real server sends one or two.
    static let maximumCount = 32

    /// The reason given for a `101`.
    static let switchingProtocols =
        "the status code 101 (Switching Protocols) cannot answer an HTTP request here (WebSockets have a task of "
        + "their own)"

    /// The reason given for more than ``maximumCount`` informational heads.
    static let tooMany = "more than \(maximumCount) informational (1xx) responses came before the final one"
}
