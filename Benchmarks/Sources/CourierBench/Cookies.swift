import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `CourierBench cookies [--requests N] [--repeat R]`: what finding a request's `Cookie` field costs, in CPU ns per
/// request: Courier's ``CookieJar`` empty (every request pays it) and with 20 cookies of which 8 go to the URL, and
/// Foundation's `HTTPCookieStorage` (what the session called before the jar) empty and with the same 20.
enum CookieBench {
    static func main(_ arguments: [String]) throws {
        var requests = 200_000
        var repeats = 7
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--requests": requests = Int(iterator.next() ?? "") ?? requests
            case "--repeat": repeats = Int(iterator.next() ?? "") ?? repeats
            default: throw BenchError(description: "cookies: unknown argument \(argument)")
            }
        }
        guard let site = URL(string: "http://api.example.org/v1/users/1k.json"),
            let cdn = URL(string: "http://cdn.example.org/"), let other = URL(string: "http://example.com/")
        else { throw BenchError(description: "bad URL") }
        let empty = CookieJar()
        let jar = CookieJar()
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: UUID().uuidString)
        for index in 0..<4 {
            for (field, url) in [
                ("host\(index)=value-\(index); Path=/v1", site),
                ("site\(index)=value-\(index); Domain=example.org; Path=/", site),
                ("other\(index)=value-\(index); Path=/admin", site),
                ("cdn\(index)=value-\(index)", cdn),
                ("else\(index)=value-\(index)", other),
            ] {
                jar.setCookie(field, for: url)
                storage.setCookies(
                    HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": field], for: url), for: url,
                    mainDocumentURL: nil)
            }
        }
        let sent = jar.cookieField(for: site) ?? ""
        print("## Cookie lookup per request (CPU ns, median of \(repeats) × \(requests))\n")
        print("| store | cookies sent | ns/request |")
        print("|---|---:|---:|")
        func measure(_ name: String, _ count: Int, _ body: () -> Void) {
            var samples: [Double] = []
            for _ in 0..<repeats {
                let start = Stages.threadCPUNanoseconds()
                for _ in 0..<requests { body() }
                samples.append(Double(Stages.threadCPUNanoseconds() - start) / Double(requests))
            }
            print("| \(name) | \(count) | \(format(median(samples), 0)) |")
        }
        measure("CookieJar, empty", 0) { _ = empty.cookieField(for: site) }
        measure("CookieJar, 20 cookies (\(sent.utf8.count)-byte field)", 8) { _ = jar.cookieField(for: site) }
        let emptyStorage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: UUID().uuidString)
        measure("HTTPCookieStorage, empty", 0) {
            _ = emptyStorage.cookies(for: site).map { HTTPCookie.requestHeaderFields(with: $0) }
        }
        let fromStorage = (storage.cookies(for: site) ?? []).count
        measure("HTTPCookieStorage, 20 cookies", fromStorage) {
            _ = storage.cookies(for: site).map { HTTPCookie.requestHeaderFields(with: $0) }
        }
    }
}
