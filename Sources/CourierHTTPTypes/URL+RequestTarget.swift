import Courier
import Foundation

extension URL {
    /// This URL with a request target (`/path?query`, percent-encoded as it will be sent) appended: the target's
    /// path after this URL's path, with one `/` where this path ends in one and the target's starts with one, and the
    /// target's query in place of this URL's (this URL's is kept when the target has none). Both are taken
    /// percent-encoded, so nothing is encoded twice; a fragment is dropped.
    ///
    /// - Throws: ``Courier/CourierError/invalidURL(_:)`` when this URL or the target cannot be parsed, or the two do
    ///   not make a URL.
    package func appendingRequestTarget(_ target: String) throws(CourierError) -> URL {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true),
            let targetComponents = URLComponents(string: target)
        else { throw CourierError.invalidURL(absoluteString + target) }
        var path = targetComponents.percentEncodedPath
        if components.percentEncodedPath.hasSuffix("/"), path.hasPrefix("/") { path.removeFirst() }
        // Both parts come from a parse, so the joined path is validly percent-encoded, as the setter requires.
        components.percentEncodedPath += path
        if let query = targetComponents.percentEncodedQuery { components.percentEncodedQuery = query }
        components.fragment = nil
        guard let url = components.url else { throw CourierError.invalidURL(absoluteString + target) }
        return url
    }
}
