import Foundation
import Testing

@testable import Courier

@Suite struct DefaultHeadersTests {
    @Test func acceptLanguageWeightsAtMostSixLanguages() {
        #expect(DefaultHeaders.acceptLanguage(for: ["en-US", "fr-FR", "de"]) == "en-US;q=1, fr-FR;q=0.9, de;q=0.8")
        let eight = ["a", "b", "c", "d", "e", "f", "g", "h"]
        #expect(DefaultHeaders.acceptLanguage(for: eight) == "a;q=1, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
        #expect(DefaultHeaders.acceptLanguage(for: []) == "en;q=1")
    }

    @Test func posixLocaleNamesBecomeLanguageTags() {
        #expect(DefaultHeaders.languageTag("de_DE.UTF-8") == "de-DE")
        #expect(DefaultHeaders.languageTag("sr_RS@latin") == "sr-RS")
        #expect(DefaultHeaders.languageTag("fr") == "fr")
        #expect(DefaultHeaders.languageTag("C") == nil)
        #expect(DefaultHeaders.languageTag("POSIX") == nil)
        #expect(DefaultHeaders.languageTag("C.UTF-8") == nil)
        #expect(DefaultHeaders.languageTag("") == nil)
        #expect(DefaultHeaders.languageTag("x;y") == nil)
    }

    @Test func environmentPrecedenceFollowsGettext() {
        #expect(DefaultHeaders.posixLanguages(environment: ["LANG": "de_DE.UTF-8"]) == ["de-DE"])
        #expect(
            DefaultHeaders.posixLanguages(environment: ["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_FR"]) == ["fr-FR"])
        #expect(
            DefaultHeaders.posixLanguages(environment: ["LANG": "de_DE", "LC_MESSAGES": "fr_FR", "LC_ALL": "it_IT"])
                == ["it-IT"])
        #expect(
            DefaultHeaders.posixLanguages(environment: ["LANGUAGE": "pt_BR:pt:en", "LANG": "pt_BR.UTF-8"])
                == ["pt-BR", "pt", "en"])
        // gettext ignores LANGUAGE when the locale is C.
        #expect(DefaultHeaders.posixLanguages(environment: ["LANGUAGE": "fr", "LANG": "C"]) == [])
        #expect(DefaultHeaders.posixLanguages(environment: [:]) == [])
        #expect(DefaultHeaders.posixLanguages(environment: ["LANG": ""]) == [])
    }

    @Test func userAgentIsASCIIWithOSAndCourierVersion() {
        let agent = DefaultHeaders.userAgent
        #expect(agent.allSatisfy { $0.isASCII })
        #expect(agent.hasSuffix(") Courier/\(DefaultHeaders.courierVersion)"))
        #if os(Linux)
            #expect(agent.contains(" (Linux "))
        #endif
        let pattern = #/^[^/ ]+/[^ ]+ \([A-Za-z]+ \d+\.\d+\.\d+\) Courier/\d+\.\d+\.\d+$/#
        #expect(agent.wholeMatch(of: pattern) != nil, "\(agent)")
    }

    @Test func asciiOnlyStripsAccentsAndNonASCII() {
        #expect(DefaultHeaders.asciiOnly("Café Ünïcode 日本") == "Cafe Unicode ")
        #expect(DefaultHeaders.asciiOnly("a\u{7}b") == "ab")
    }
}
