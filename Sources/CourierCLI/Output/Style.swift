/// ANSI styles, applied only when colour is on.
struct Style: Sendable {
    var enabled: Bool

    func apply(_ code: String, _ text: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { apply("1", text) }
    func red(_ text: String) -> String { apply("31", text) }
    func green(_ text: String) -> String { apply("32", text) }
    func yellow(_ text: String) -> String { apply("33", text) }
    func blue(_ text: String) -> String { apply("34", text) }
    func magenta(_ text: String) -> String { apply("35", text) }
    func cyan(_ text: String) -> String { apply("36", text) }
    func dim(_ text: String) -> String { apply("2", text) }
}
