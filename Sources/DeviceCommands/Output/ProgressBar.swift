import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// A download progress bar on stderr, drawn only when stderr is a terminal (nothing
/// animated when output is piped or logged).
final class ProgressBar: Sendable {
    private struct State {
        /// A duration's mark: on the monotonic clock, so a wall clock set back mid-download
        /// never freezes the bar.
        var lastDraw: ContinuousClock.Instant?
        var drawn = false
    }
    /// Lines are drawn under its lock, so two updates never interleave on the terminal.
    private let state = Mutex(State())

    /// A receiver of download progress (``CheckReporter``'s), or `nil` when stderr is not a terminal.
    static func handlerIfTerminal() -> (ProgressBar, CheckReporter.Progress)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        let bar = ProgressBar()
        return (bar, { version, completed, total in bar.update(version: version, completed: completed, total: total) })
    }

    func update(version: String, completed: Int64, total: Int64?) {
        state.withLock { state in
            let now = ContinuousClock.now
            let done = total.map { completed >= $0 } ?? false
            guard done || state.lastDraw.map({ $0.duration(to: now) >= .milliseconds(100) }) ?? true else { return }
            state.lastDraw = now
            state.drawn = true
            Console.err("\r\u{1B}[K" + Self.line(version: version, completed: completed, total: total))
        }
    }

    /// Ends the bar's line so later messages start on a fresh line.
    func finish() {
        state.withLock { state in
            if state.drawn { Console.err("\n") }
            state.drawn = false
        }
    }

    static func line(version: String, completed: Int64, total: Int64?) -> String {
        let mb = { (b: Int64) in String(format: "%.1f MB", Double(b) / 1_000_000) }
        guard let total, total > 0 else { return "downloading \(version)  \(mb(completed))" }
        let fraction = min(1, Double(completed) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "downloading \(version) [\(bar)] \(Int(fraction * 100))%  \(mb(completed)) / \(mb(total))"
    }
}
