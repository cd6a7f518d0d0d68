import Courier
import Foundation

/// A one-line progress bar on standard error: bar, percentage, bytes, rate and time left, redrawn in place.
///
/// Drawn only when standard error is a terminal (or forced for tests); at most every 100 ms, plus the final state.
final class ProgressBar: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant?
        var drewFinal = false
        var drawn = false
        var last: TaskProgress?
    }

    private let console: Console
    private let label: String
    private let state = LockedValue(State())

    init(console: Console, label: String) {
        self.console = console
        self.label = label
    }

    /// Draws `progress` unless the last draw was under 100 ms ago; `final` always draws and ends the line.
    func update(_ progress: TaskProgress, final: Bool = false) {
        guard console.showsProgress else { return }
        let now = ContinuousClock.now
        let draw = state.withLock { state -> Bool in
            if state.drewFinal { return false }
            state.last = progress
            if !final, let last = state.lastDraw, now - last < .milliseconds(100) { return false }
            state.lastDraw = now
            state.drawn = true
            if final { state.drewFinal = true }
            return true
        }
        guard draw else { return }
        let line = Self.render(progress, label: label, width: 24)
        console.err("\r" + line + (console.stderrIsTerminal ? "\u{1B}[K" : "") + (final ? "\n" : ""))
    }

    /// Draws the last progress reported as the final state (the transfer is complete).
    func finish() {
        guard let last = state.withLock({ $0.last }) else { return }
        var final = last
        final.estimatedTimeRemaining = 0
        update(final, final: true)
    }

    /// Ends the line after an interrupted transfer, so the next message starts on its own line.
    func abandon() {
        let drawn = state.withLock { state -> Bool in
            defer { state.drewFinal = true }
            return state.drawn && !state.drewFinal
        }
        if drawn { console.err("\n") }
    }

    /// E.g. `archive.bin [##########----------]  50%  2.0 MiB / 4.0 MiB  8.1 MiB/s  ETA 0:00`.
    ///
    /// Every number comes from the server's `Content-Length` or from measurements, so none is trusted to fit: the
    /// fraction is clamped to 0…1 and the rate and time left are converted without trapping.
    static func render(_ progress: TaskProgress, label: String, width: Int) -> String {
        let known = progress.total > 0
        let ratio = known ? Double(progress.completed) / Double(progress.total) : 0
        let fraction = ratio.isFinite ? min(1, max(0, ratio)) : 0
        let filled = min(width, max(0, Int((fraction * Double(width)).rounded(.down))))
        let bar = known ? String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) : ""
        var parts = [label]
        if known {
            parts.append("[\(bar)]")
            parts.append(String(format: "%3d%%", Int((fraction * 100).rounded(.down))))
            parts.append("\(byteCount(progress.completed)) / \(byteCount(progress.total))")
        } else {
            parts.append(byteCount(progress.completed))
        }
        parts.append("\(byteCount(clampedInt64(progress.throughput)))/s")
        if let eta = progress.estimatedTimeRemaining, known {
            parts.append("ETA \(duration(eta))")
        }
        return parts.joined(separator: "  ")
    }

    /// `512 B`, `1.5 KiB`, `12.0 MiB`…
    static func byteCount(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(max(0, count))
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int64(value)) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// The longest time left shown: 99:59:59. Past it (a huge `Content-Length` trickled slowly), or when it is not
    /// a number, the time left is `--:--`.
    static let longestDuration: TimeInterval = 100 * 3600 - 1

    /// `m:ss`, or `h:mm:ss` past an hour; `--:--` when unknown or longer than ``longestDuration``.
    static func duration(_ seconds: TimeInterval) -> String {
        // Checked before any conversion: Int(1e300) traps.
        guard seconds.isFinite, seconds <= longestDuration else { return "--:--" }
        let total = Int(max(0, seconds).rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    /// `value` as an `Int64`, 0 when it is not a number and clamped to `0…Int64.max` (a conversion of a value out
    /// of range traps).
    static func clampedInt64(_ value: Double) -> Int64 {
        guard value.isFinite, value > 0 else { return 0 }
        // Int64.max is not exactly representable as a Double; 2^63 is, and anything at or above it is clamped.
        return value >= 9_223_372_036_854_775_808.0 ? .max : Int64(value)
    }
}
