import Foundation

/// curl's cookie files (the Netscape format, `curl -b FILE` and `curl -c FILE`), so cookies move between Courier
/// and curl, wget or a browser's export.
///
/// One cookie a line, seven fields separated by tabs: the domain (with a leading `.` when subdomains get it too),
/// `TRUE` or `FALSE` for the same, the path, `TRUE` or `FALSE` for Secure, the expiry in seconds since 1970 (`0`
/// for a session cookie), the name and the value. A line starting `#HttpOnly_` is an HttpOnly cookie; other lines
/// starting with `#`, empty lines and lines that cannot be read are skipped.
extension CookieJar {
    /// The jar's cookies in curl's format, with its header.
    public var netscapeFileText: String {
        var text = "# Netscape HTTP Cookie File\n# Written by Courier; the format curl and wget read.\n\n"
        for cookie in cookies {
            let domain = (cookie.isHTTPOnly ? "#HttpOnly_" : "") + (cookie.isHostOnly ? "" : ".") + cookie.domain
            let expires = cookie.expiresDate.map { String(Int64(max(1, $0.timeIntervalSince1970.rounded(.up)))) } ?? "0"
            let fields = [
                domain, cookie.isHostOnly ? "FALSE" : "TRUE", cookie.path, cookie.isSecure ? "TRUE" : "FALSE", expires,
                cookie.name, cookie.value,
            ]
            text += fields.joined(separator: "\t") + "\n"
        }
        return text
    }

    /// Adds the cookies of `text`, a file in curl's format, replacing those with the same name, domain and path;
    /// expired ones are skipped.
    ///
    /// - Returns: how many lines were read as cookies.
    @discardableResult
    public func insert(netscapeFileText text: String) -> Int {
        var read = 0
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            if let cookie = Self.cookie(netscapeLine: line) {
                insert(cookie)
                read += 1
            }
        }
        return read
    }

    /// The cookie one line describes; `nil` for a comment or a line that is not one.
    static func cookie(netscapeLine line: Substring) -> Cookie? {
        var line = line
        if line.last == "\r" { line = line.dropLast() }
        var isHTTPOnly = false
        if line.hasPrefix("#HttpOnly_") {
            isHTTPOnly = true
            line = line.dropFirst("#HttpOnly_".count)
        } else if line.hasPrefix("#") {
            return nil
        }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 6 || fields.count == 7 else { return nil }
        var domain = fields[0].lowercased()
        let includesSubdomains = fields[1].uppercased() == "TRUE"
        if domain.hasPrefix(".") { domain.removeFirst() }
        guard !domain.isEmpty, let seconds = Int64(fields[4]), fields[2].hasPrefix("/") else { return nil }
        let value = fields.count == 7 ? String(fields[6]) : ""
        return Cookie(
            name: String(fields[5]), value: value, domain: domain, isHostOnly: !includesSubdomains,
            path: String(fields[2]),
            expiresDate: seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds)),
            isSecure: fields[3].uppercased() == "TRUE", isHTTPOnly: isHTTPOnly)
    }
}
