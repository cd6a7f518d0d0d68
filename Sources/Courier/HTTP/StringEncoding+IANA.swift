import Foundation

extension String.Encoding {
    /// The encoding for a common IANA charset name (`utf-8`, `iso-8859-1`, `windows-1252`, `shift_jis`…), compared
    /// case-insensitively; `nil` for names Courier does not know.
    init?(ianaCharsetName charset: String) {
        guard let encoding = Self.byCharsetName(charset) else { return nil }
        self = encoding
    }

    /// The IANA charset name of the common encodings (`utf-8`, `iso-8859-1`, `windows-1252`…), as a `charset`
    /// parameter writes it; `nil` for others.
    var ianaCharsetName: String? {
        switch self {
        case .utf8: "utf-8"
        case .ascii: "us-ascii"
        case .isoLatin1: "iso-8859-1"
        case .isoLatin2: "iso-8859-2"
        case .utf16: "utf-16"
        case .utf16LittleEndian: "utf-16le"
        case .utf16BigEndian: "utf-16be"
        case .windowsCP1250: "windows-1250"
        case .windowsCP1251: "windows-1251"
        case .windowsCP1252: "windows-1252"
        case .windowsCP1253: "windows-1253"
        case .windowsCP1254: "windows-1254"
        case .shiftJIS: "shift_jis"
        case .japaneseEUC: "euc-jp"
        case .iso2022JP: "iso-2022-jp"
        case .macOSRoman: "macintosh"
        default: nil
        }
    }

    private static func byCharsetName(_ charset: String) -> String.Encoding? {
        switch charset.lowercased() {
        case "utf-8", "utf8": return .utf8
        case "us-ascii", "ascii": return .ascii
        case "iso-8859-1", "latin1", "iso_8859-1", "l1": return .isoLatin1
        case "iso-8859-2", "latin2": return .isoLatin2
        case "utf-16": return .utf16
        case "utf-16le": return .utf16LittleEndian
        case "utf-16be": return .utf16BigEndian
        case "utf-32": return .utf32
        case "utf-32le": return .utf32LittleEndian
        case "utf-32be": return .utf32BigEndian
        case "windows-1250", "cp1250": return .windowsCP1250
        case "windows-1251", "cp1251": return .windowsCP1251
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1253", "cp1253": return .windowsCP1253
        case "windows-1254", "cp1254": return .windowsCP1254
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        case "macintosh", "mac": return .macOSRoman
        default: return nil
        }
    }
}
