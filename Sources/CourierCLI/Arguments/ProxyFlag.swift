import ArgumentParser
import Courier
import Foundation

/// `--proxy URL`, which every command that connects takes; without it, the environment's proxies apply
/// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`, as curl reads them).
struct ProxyFlag: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Send every request through this proxy: http://[user:password@]host:port or socks5://host:port; "
                + "no_proxy still applies. An empty value sends everything direct.",
            valueName: "url"))
    var proxy: String?

    /// The session's proxy settings: `--proxy`'s, else the environment's.
    ///
    /// - Throws: ``CommandFailure`` for a value that is not a proxy URL (the password is not shown).
    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProxySettings? {
        guard let proxy else { return .environment(environment) }
        guard !proxy.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        do {
            return ProxySettings(
                all: try Proxy(url: proxy), exceptions: ProxySettings.exceptions(fromEnvironment: environment))
        } catch {
            throw CommandFailure(
                .failure,
                "--proxy \(Proxy.redacted(proxy)) is not a proxy URL (http://[user:password@]host:port or "
                    + "socks5://host:port)")
        }
    }
}
