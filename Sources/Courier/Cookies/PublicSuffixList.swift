/// The Public Suffix List's rules, to tell a public suffix (`org`, `co.uk`, `github.io`), under which anyone may
/// register a name, from a domain someone owns. A cookie may not be set for a public suffix (RFC 6265bis §5.7
/// step 9), or one site could set cookies for all the others under it.
///
/// The rules are compiled in (`PublicSuffixList+Rules.swift`, made from Debian's `publicsuffix` package by
/// `Scripts/update-public-suffix-list.py`), so every platform decides the same way and nothing is read at run time;
/// ``source`` says which list it is. Both sections of the list count, ICANN's and the private one, as in browsers
/// and libpsl. A name no rule covers is a public suffix only when it is one label (the list's implicit `*` rule).
enum PublicSuffixList {
    private struct Rules: Sendable {
        var exact: Set<String> = []
        /// The part after `*.` of each wildcard rule.
        var wildcards: Set<String> = []
        /// The part after `!` of each exception rule.
        var exceptions: Set<String> = []
    }

    /// Parsed once, on first use (about 10,000 rules).
    private static let rules: Rules = {
        var rules = Rules()
        for line in rulesText.split(separator: "\n") {
            let rule = line.drop(while: { $0 == " " })
            if rule.hasPrefix("!") {
                rules.exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                rules.wildcards.insert(String(rule.dropFirst(2)))
            } else if !rule.isEmpty {
                rules.exact.insert(String(rule))
            }
        }
        return rules
    }()

    /// Whether `domain` (lowercase, no leading or trailing dot) is a public suffix.
    static func isPublicSuffix(_ domain: String) -> Bool {
        let rules = rules
        if rules.exceptions.contains(domain) { return false }
        if rules.exact.contains(domain) { return true }
        guard let dot = domain.firstIndex(of: ".") else { return true }
        return rules.wildcards.contains(String(domain[domain.index(after: dot)...]))
    }
}
