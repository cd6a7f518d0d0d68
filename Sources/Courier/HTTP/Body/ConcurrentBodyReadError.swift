/// A body was read by two iterations at once.
struct ConcurrentBodyReadError: Error, CustomStringConvertible {
    var description: String { "The body is already being read by another iteration." }
}
