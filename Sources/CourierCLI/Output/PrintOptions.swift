/// `--print=HBhb`: which parts of the exchange are printed.
///
/// The response body goes to standard output; the request and the response head go to standard error, so that
/// `courier URL > file` saves exactly the body. With `--offline` everything goes to standard output, as the
/// request is then the output.
struct PrintOptions: Sendable, Hashable {
    /// `H`: the request line and headers.
    var requestHead = false
    /// `B`: the request body.
    var requestBody = false
    /// `h`: the response status line and headers.
    var responseHead = false
    /// `b`: the response body.
    var responseBody = false

    /// Nothing printed.
    init() {}

    /// Parses letters from `HBhb`.
    ///
    /// - Throws: ``CommandFailure`` naming a letter that is not one of them.
    init(_ letters: String) throws {
        for letter in letters {
            switch letter {
            case "H": requestHead = true
            case "B": requestBody = true
            case "h": responseHead = true
            case "b": responseBody = true
            default:
                throw CommandFailure(
                    .failure,
                    "--print “\(letters)”: “\(letter)” is not one of H (request headers), B (request body), "
                        + "h (response headers), b (response body)")
            }
        }
    }

    /// What is printed when `--print` is not given: the body; `--verbose` adds the request and the response head;
    /// `--offline` prints the request.
    static func defaults(verbose: Bool, offline: Bool) -> PrintOptions {
        var options = PrintOptions()
        options.responseBody = !offline
        if verbose || offline {
            options.requestHead = true
            options.requestBody = true
        }
        if verbose, !offline { options.responseHead = true }
        return options
    }
}
