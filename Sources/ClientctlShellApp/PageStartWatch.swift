internal import CWebKitGTK
import ClientFoundation
import ClientUpdater
import Foundation
import ShellRules

/// Carries out ``RollbackWatch``'s rule in the shell (docs/native-shell.md#a-page-that-does-not-start):
/// arms it when a rollback lands on a committed version (or the shell starts on one), runs
/// its timer on GTK's main loop, reports each step as a `pageNotStarting` event and does
/// it: a reload, the app's website data cleared then a reload, or a rollback to the
/// embedded seed. A page that then acknowledges is reported as `pageStarted`.
///
/// Every entry point may be called from any thread; the rule, the timer and the view are
/// touched on the GTK main thread only.
final class PageStartWatch: @unchecked Sendable {
    // @unchecked Sendable: it holds the `ShellView` (a `WebKitWebView`, a GTK object) and is
    // confined to the GTK main thread: `rule` and `generation` are read and written there only.
    private let updater: Updater
    private let view: ShellView
    private let log: EventLog
    private var rule: RollbackWatch
    /// Bumped whenever the deadline changes: an older timer finds another value and does nothing.
    private var generation = 0
    /// The watch's clock (the engine's, `DeviceEngine.Options.clock`): its readings are what
    /// the rule's deadlines count in.
    private let clock: MonotonicClock

    /// The website data a cleared storage loses: everything the app's pages keep, except
    /// cookies (the loopback origin's session lives in one) and HSTS/ITP bookkeeping.
    static let clearedTypes: [WebKitWebsiteDataTypes] = [
        WEBKIT_WEBSITE_DATA_INDEXEDDB_DATABASES, WEBKIT_WEBSITE_DATA_LOCAL_STORAGE, WEBKIT_WEBSITE_DATA_SESSION_STORAGE,
        WEBKIT_WEBSITE_DATA_SERVICE_WORKER_REGISTRATIONS, WEBKIT_WEBSITE_DATA_DOM_CACHE, WEBKIT_WEBSITE_DATA_OFFLINE_APPLICATION_CACHE,
        WEBKIT_WEBSITE_DATA_WEBSQL_DATABASES, WEBKIT_WEBSITE_DATA_MEMORY_CACHE, WEBKIT_WEBSITE_DATA_DISK_CACHE,
    ]

    /// `timeout`: the engine's startup timeout; `clock`: the engine's monotonic clock. Made on
    /// the main thread once the view is built: the top page's uncaught errors are listened
    /// for from here on.
    init(updater: Updater, view: ShellView, log: EventLog, timeout: Duration, clock: MonotonicClock) {
        self.updater = updater
        self.clock = clock
        self.view = view
        self.log = log
        self.rule = RollbackWatch(timeout: timeout)
        PageErrors(view: view) { [self] message, version in rule.pageError(message, version: version) }.install()
    }

    /// Time on the watch's clock.
    private var now: Duration { clock.now }

    /// The engine started on `report.current`: watched when it is a committed version
    /// (not on trial, not the seed).
    func started(_ report: LifecycleReport) {
        guard report.trial == nil, let id = report.current.installedID, id == report.lastKnownGood else { return }
        GMain.async { [self] in arm(id, cause: .start) }
    }

    /// One of the engine's events: a trial that starts ends the watch (the watchdog owns
    /// that page); a failed or revoked version arms it for the version reverted to, when
    /// that version is not on trial and not the seed.
    func engineEvent(_ event: UpdaterEvent) {
        switch event {
        case .watchdog(.trialStarted):
            GMain.async { [self] in disarm() }
        case .watchdog(.failed(_, _, _, let target)), .watchdog(.revoked(_, let target)):
            guard let id = target.installedID else {
                GMain.async { [self] in disarm() }
                return
            }
            Task { [self] in
                let status = try? await UpdaterControl(updater).status()
                guard let status, !status.inTrial, status.current == id else { return }
                GMain.async { [self] in arm(id, cause: .rollback) }
            }
        default: break
        }
    }

    /// The page of `version` acknowledged start-up (the engine accepted the message, or
    /// answered that nothing is on trial).
    func acknowledged(_ version: String?) {
        GMain.async { [self] in
            guard let steps = rule.acknowledged(version) else { return }
            generation += 1
            if steps > 0, let version { log.emit("pageStarted", ["version": version, "steps": steps]) }
        }
    }

    private func arm(_ version: String, cause: RollbackWatch.Cause) {
        rule.watch(version, cause: cause, now: now)
        schedule()
    }

    private func disarm() {
        rule.stop()
        generation += 1
    }

    /// A timer for the rule's deadline; it replaces any earlier one.
    private func schedule() {
        generation += 1
        guard let deadline = rule.deadline else { return }
        let mine = generation
        GMain.after(max(.zero, deadline - now) + .milliseconds(50)) { [self] in
            guard mine == generation else { return }
            fire()
        }
    }

    private func fire() {
        guard let step = rule.due(now: now) else {
            schedule()
            return
        }
        var fields: [String: Any] = [
            "version": step.version, "step": step.number, "remedy": step.remedy.rawValue, "reason": step.reason,
            "after": step.cause.rawValue, "waitedMs": Int(step.waited / .milliseconds(1)),
        ]
        if let error = step.pageError { fields["message"] = error }
        log.emit("pageNotStarting", fields)
        switch step.remedy {
        case .reload:
            view.loadApp()
            schedule()
        case .clearStorage:
            schedule()
            clearStorage { [self] failure in
                if let failure {
                    ShellRun.printError(failure)
                    log.emit("error", ["message": failure])
                }
                view.loadApp()
            }
        case .seed:
            generation += 1
            Task { [self] in
                do {
                    try await updater.rollback()
                } catch {
                    let message = "the page of \(step.version) does not start and cannot be rolled back: \(error)"
                    GMain.async { [self] in
                        ShellRun.printError(message)
                        log.emit("error", ["message": message])
                        view.showProblem(message)
                    }
                }
            }
        }
    }

    /// Clears the app's website data (``clearedTypes``, every origin of this root's
    /// context: they are all the app's), then calls `done` with the failure, if any. WebKit's
    /// network process closes the databases it holds open before it deletes them.
    private func clearStorage(done: @escaping (String?) -> Void) {
        guard let webView = view.view, let manager = webkit_web_view_get_website_data_manager(webView) else {
            done("cannot clear the app's storage: the window is closed")
            return
        }
        let types = WebKitWebsiteDataTypes(rawValue: Self.clearedTypes.reduce(0) { $0 | $1.rawValue })
        let box = Unmanaged.passRetained(ClearRequest(done: done)).toOpaque()
        webkit_website_data_manager_clear(
            manager, types, 0, nil,
            { source, result, data in
                guard let data else { return }
                let request = Unmanaged<ClearRequest>.fromOpaque(data).takeRetainedValue()
                let manager = UnsafeMutableRawPointer(source)?.assumingMemoryBound(to: WebKitWebsiteDataManager.self)
                var error: UnsafeMutablePointer<GError>?
                if webkit_website_data_manager_clear_finish(manager, result, &error) == 0 {
                    let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown error"
                    if let error { g_error_free(error) }
                    request.done("cannot clear the app's storage: \(message)")
                } else {
                    request.done(nil)
                }
            }, box)
    }
}

/// The callback of one clear, carried through WebKit's `user_data`.
private final class ClearRequest {
    let done: (String?) -> Void
    init(done: @escaping (String?) -> Void) { self.done = done }
}
