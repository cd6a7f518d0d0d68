import Foundation

/// The `Accept-Language` and `User-Agent` values every request serializer starts with, as AFNetworking builds them.
public enum DefaultHeaders {
    /// Courier's version, as it appears in the `User-Agent`.
    public static let courierVersion = "0.2.0"

    /// `Accept-Language` for a list of preferred languages: at most six, weighted `q=1`, `q=0.9`, … `q=0.5`,
    /// joined with `, `; `en` when the list is empty. E.g. `["de-DE", "en"]` → `de-DE;q=1, en;q=0.9`.
    public static func acceptLanguage(for languages: [String]) -> String {
        let chosen = languages.isEmpty ? ["en"] : Array(languages.prefix(6))
        return chosen.enumerated()
            .map { index, language in
                let quality = index == 0 ? "1" : "0.\(10 - index)"
                return "\(language);q=\(quality)"
            }
            .joined(separator: ", ")
    }

    /// The user's preferred languages as BCP 47 tags.
    ///
    /// On Apple platforms this is `Locale.preferredLanguages`. Elsewhere Foundation ignores the environment, so the
    /// POSIX variables are read as gettext does: `LANGUAGE` (a `:`-separated list) unless the locale is `C`/`POSIX`,
    /// then the first of `LC_ALL`, `LC_MESSAGES`, `LANG`. `de_DE.UTF-8` becomes `de-DE`.
    public static func preferredLanguages(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        #if canImport(Darwin)
            return Locale.preferredLanguages
        #else
            return posixLanguages(environment: environment)
        #endif
    }

    static func posixLanguages(environment: [String: String]) -> [String] {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        var candidates: [String] = []
        if let list = environment["LANGUAGE"], !list.isEmpty, let locale, languageTag(locale) != nil {
            candidates = list.split(separator: ":").map(String.init)
        }
        if let locale { candidates.append(locale) }
        var seen = Set<String>()
        return candidates.compactMap(languageTag).filter { seen.insert($0).inserted }
    }

    /// `de_DE.UTF-8@euro` → `de-DE`; `C` and `POSIX` have no language.
    static func languageTag(_ posixLocale: String) -> String? {
        let base = posixLocale.prefix { $0 != "." && $0 != "@" }
        guard !base.isEmpty, base != "C", base != "POSIX" else { return nil }
        let tag = base.replacingOccurrences(of: "_", with: "-")
        guard tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else { return nil }
        return tag
    }

    /// `<executable>/<version> (<OS name> <OS version>) Courier/<version>`, ASCII only.
    ///
    /// The executable and version come from the main bundle where it has them (Apple platforms), else the process
    /// name and `0`. E.g. `courier/0 (Linux 6.1.0) Courier/0.2.0`.
    public static let userAgent: String = {
        let info = Bundle.main.infoDictionary ?? [:]
        let executable =
            info["CFBundleExecutable"] as? String ?? info["CFBundleIdentifier"] as? String
            ?? ProcessInfo.processInfo.processName
        let version =
            info["CFBundleShortVersionString"] as? String ?? info["CFBundleVersion"] as? String ?? "0"
        let os = ProcessInfo.processInfo.operatingSystemVersion
        let osVersion = "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)"
        return asciiOnly("\(executable)/\(version) (\(operatingSystemName) \(osVersion)) Courier/\(courierVersion)")
    }()

    private static var operatingSystemName: String {
        #if os(iOS)
            return "iOS"
        #elseif os(tvOS)
            return "tvOS"
        #elseif os(watchOS)
            return "watchOS"
        #elseif os(visionOS)
            return "visionOS"
        #elseif os(macOS)
            return "macOS"
        #elseif os(Linux)
            return "Linux"
        #elseif os(Windows)
            return "Windows"
        #else
            return "Unknown"
        #endif
    }

    /// Strips accents by decomposition, then drops whatever is still not printable ASCII (`Café` → `Cafe`).
    static func asciiOnly(_ string: String) -> String {
        let scalars = string.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
            $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F
        }
        return String(String.UnicodeScalarView(scalars))
    }
}
