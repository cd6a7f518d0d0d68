/// Why reachability cannot be watched.
public enum ReachabilityError: Error, Sendable, Hashable {
    /// `ReachabilityManager(address:)` was given something that is not an IPv4 or IPv6 literal.
    case invalidAddress(String)
    /// The system refused a call (the routing socket), with its `errno`.
    case system(String, Int32)
}
