import ClientFoundation
import ClientUpdater
import Foundation

/// What the shell does when the view's web process dies (it crashed, exceeded WebKit's
/// memory limit, or was killed): never a blank window (docs/native-shell.md#a-page-that-dies).
///
/// A version whose page dies before it acknowledged start-up fails its trial at once
/// (``Updater/pageCrashed(version:lockWait:)``) and the engine loads the good version.
/// Any other page (a committed version, the seed) is reloaded after ``ReloadBackoff``'s
/// delay; when it keeps dying the shell says so (an `error` event, a line on stderr and a
/// page in the window) and tries again only after a long pause. Main thread only.
final class PageRecovery: @unchecked Sendable {
    // @unchecked Sendable: it holds the `ShellView` (a `WebKitWebView`, a GTK object) and is
    // confined to the GTK main thread: `backoff` is read and written there only.
    let updater: Updater
    let view: ShellView
    let log: EventLog
    private var backoff = ReloadBackoff()
    /// The clock the backoff's deaths are timed on (the engine's, `DeviceEngine.Options.clock`).
    private let clock: MonotonicClock

    init(updater: Updater, view: ShellView, log: EventLog, clock: MonotonicClock) {
        self.updater = updater
        self.clock = clock
        self.view = view
        self.log = log
    }

    /// The view's web process ended (main thread): `reason` as WebKit gives it, `version`
    /// the version of the page it showed (or was loading), `byShell` when the shell ended
    /// the process itself to load another page in a new one (`unresponsive`,
    /// `fresh-process`: the view loads at once).
    func terminated(reason: String, version: String?, byShell: Bool) {
        guard !byShell else {
            log.emit("webProcessTerminated", Self.fields(reason: reason, version: version))
            return
        }
        Task { [self] in
            // The fleet report first, so it precedes the trial's rollback in the journal.
            updater.recordWebProcessDied(webKitReason: reason, running: version)
            var failedTrial = false
            if let version {
                do {
                    failedTrial = try await updater.pageCrashed(version: version).failed != nil
                } catch {
                    log.emit("error", ["message": "startup watchdog: \(error)"])
                }
            }
            let ended = failedTrial
            GMain.async { [self] in ended ? trialFailed(reason: reason, version: version) : reload(reason: reason, version: version) }
        }
    }

    /// The engine failed the trial and loads the good version.
    private func trialFailed(reason: String, version: String?) {
        var fields = Self.fields(reason: reason, version: version)
        fields["trialFailed"] = true
        log.emit("webProcessTerminated", fields)
    }

    /// Reloads the page after the backoff's delay; reports when it gives up.
    private func reload(reason: String, version: String?) {
        let decision = backoff.died(at: clock.now)
        var fields = Self.fields(reason: reason, version: version)
        fields["deaths"] = decision.deaths
        fields["reloadInMs"] = Int(decision.reloadAfter / .milliseconds(1))
        log.emit("webProcessTerminated", fields)
        if decision.gaveUp {
            let message =
                "the page of \(version ?? "the app") stopped \(decision.deaths) times in a row (\(reason)): "
                + "the next reload is in \(decision.reloadAfter.components.seconds) s"
            ShellRun.printError(message)
            log.emit("error", ["message": message])
            view.showProblem(message)
        }
        GMain.after(decision.reloadAfter) { [view] in view.loadApp() }
    }

    private static func fields(reason: String, version: String?) -> [String: Any] {
        var fields: [String: Any] = ["reason": reason]
        if let version { fields["version"] = version }
        return fields
    }
}

/// When to reload a page whose web process died, so that a page that dies at once never
/// makes the shell spin: after 1, 2, then 4 s; a fourth death in a row gives up (reported)
/// and waits ``retryAfterGivingUp`` before the next reload. A page that lives ``calm``
/// after its reload ends the series.
struct ReloadBackoff: Sendable, Equatable {
    /// The time before the reload after the first, second and third death in a row.
    static let delays: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]
    /// How long a reloaded page has to live for its next death to start a new series.
    static let calm: Duration = .seconds(60)
    /// The time before the reload after the shell gave up.
    static let retryAfterGivingUp: Duration = .seconds(300)

    struct Decision: Sendable, Equatable {
        /// Deaths in a row, this one included.
        var deaths: Int
        /// The time until the reload.
        var reloadAfter: Duration
        /// More deaths in a row than ``ReloadBackoff/delays`` has: report it.
        var gaveUp: Bool
    }

    private(set) var deaths = 0
    private var reloadAt: Duration?

    /// A death at `now` (a reading of the monotonic clock).
    mutating func died(at now: Duration) -> Decision {
        if let reloadAt, now - reloadAt >= Self.calm { deaths = 0 }
        deaths += 1
        let gaveUp = deaths > Self.delays.count
        let delay = gaveUp ? Self.retryAfterGivingUp : Self.delays[deaths - 1]
        reloadAt = now + delay
        return Decision(deaths: deaths, reloadAfter: delay, gaveUp: gaveUp)
    }
}
