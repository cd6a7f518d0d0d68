/// `--pretty`: whether bodies are reformatted and coloured.
enum PrettyMode: String, Sendable, Hashable, CaseIterable {
    /// Format and colour on a terminal, neither when piped (the default).
    case auto
    /// Format and colour.
    case all
    /// Colour only.
    case colors
    /// Format only.
    case format
    /// Neither: the bytes as received.
    case none

    /// Whether JSON is re-indented.
    func formats(terminal: Bool) -> Bool {
        switch self {
        case .auto: return terminal
        case .all, .format: return true
        case .colors, .none: return false
        }
    }

    /// Whether ANSI colour is used.
    func colors(terminal: Bool, allowed: Bool) -> Bool {
        switch self {
        case .auto: return terminal && allowed
        case .all, .colors: return true
        case .format, .none: return false
        }
    }
}
