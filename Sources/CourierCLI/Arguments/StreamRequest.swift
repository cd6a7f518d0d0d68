import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The request of `courier sse` and `courier ws`: a URL whose scheme is one of those the command takes, and the
/// header fields of its `-H "Name: value"` options.
enum StreamRequest {
    /// - Throws: ``CommandFailure`` for a URL without a host or with another scheme, or a field without a colon.
    static func make(url text: String, original: String, schemes: [String], headers: [String]) throws -> URLRequest {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
            url.host?.isEmpty == false
        else {
            let names = schemes.joined(separator: ", ")
            throw CommandFailure(
                .failure, "“\(TerminalText.escape(original, keepingLineBreaks: false))” is not a URL of \(names)")
        }
        var request = URLRequest(url: url)
        for field in headers {
            guard let colon = field.firstIndex(of: ":") else {
                throw CommandFailure(
                    .failure, "-H “\(TerminalText.escape(field, keepingLineBreaks: false))”: not Name: value")
            }
            request.addValue(
                field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces),
                forHTTPHeaderField: String(field[..<colon]))
        }
        return request
    }
}
