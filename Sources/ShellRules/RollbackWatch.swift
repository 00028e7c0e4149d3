/// Watches a page that has no trial to fail: the good version a rollback (or a revocation)
/// landed on, and a committed version at start. Such a page's acknowledgement commits
/// nothing, so the engine's watchdog never looks at it; when it cannot start (a trial
/// upgraded the app's IndexedDB schema, and the older code now gets `VersionError` from
/// `indexedDB.open`), the window would stay white for good. The rule
/// (docs/native-shell.md#a-page-that-does-not-start), one step each time the page has not
/// acknowledged within the startup timeout:
///
/// 1. ``Remedy/reload``: a load that failed once (a slow disk, a lost request) may not fail again;
/// 2. ``Remedy/clearStorage``: the app's website data is cleared (IndexedDB, local and session
///    storage, service workers, caches; not cookies) and the page reloaded;
/// 3. ``Remedy/seed``: the version is rolled back (blacklisted) to the embedded seed.
///
/// The seed itself is never watched: it needs no acknowledgement, and its page may never
/// send one. An uncaught error of the page before its acknowledgement does not end the
/// wait (an app often survives one), but it is what the step reports as the cause.
///
/// Pure and clock-injected (monotonic seconds in, decisions out): the shell's
/// `PageStartWatch` runs the timer and carries the steps out on the main thread.
package struct RollbackWatch: Sendable, Equatable {
    /// What the shell does at a step.
    package enum Remedy: String, Sendable, Equatable {
        /// Load the page again.
        case reload
        /// Clear the app's website data, then load the page again.
        case clearStorage = "clear-storage"
        /// Roll the version back to the embedded seed (no further watch).
        case seed
    }

    /// Why the page is being watched.
    package enum Cause: String, Sendable, Equatable {
        /// A failed or revoked trial reverted to this version.
        case rollback
        /// The shell started on this committed version.
        case start
    }

    /// One step of the rule: what to report and do.
    package struct Step: Sendable, Equatable {
        /// The version whose page did not start.
        package var version: String
        /// 1, 2 or 3.
        package var number: Int
        package var remedy: Remedy
        /// `no-acknowledgement`, or `page-error` when the page threw before it.
        package var reason: String
        /// The page's first uncaught error since its last load, if any.
        package var pageError: String?
        /// Why the page was watched.
        package var cause: Cause
        /// Time since the load the step gives up on.
        package var waited: Duration
    }

    /// The version watched, and where its rule is.
    private struct Watched: Sendable, Equatable {
        var version: String
        var cause: Cause
        /// The monotonic clock's reading at the load the deadline counts from.
        var since: Duration
        /// Steps taken so far for this version.
        var steps: Int
        var pageError: String?
    }

    /// How long a page has to acknowledge (the engine's startup timeout).
    package let timeout: Duration
    private var watched: Watched?

    package init(timeout: Duration) {
        self.timeout = timeout
    }

    /// The version watched, if any.
    package var version: String? { watched?.version }
    /// Steps taken for the watched version.
    package var steps: Int { watched?.steps ?? 0 }
    /// When the next step is due (a reading of the monotonic clock), `nil` when nothing is
    /// watched.
    package var deadline: Duration? { watched.map { $0.since + timeout } }

    /// The page of `version` is loading for `cause` at `now`: watch it. A version already
    /// watched keeps its steps (a second rollback onto it does not start the rule over).
    package mutating func watch(_ version: String, cause: Cause, now: Duration) {
        if let watched, watched.version == version {
            self.watched?.since = now
            self.watched?.pageError = nil
            return
        }
        watched = Watched(version: version, cause: cause, since: now, steps: 0)
    }

    /// A trial started (the engine's watchdog owns that page), or the seed runs: stop.
    package mutating func stop() {
        watched = nil
    }

    /// The page of `version` acknowledged: it started. Returns the steps it took, `nil`
    /// when `version` was not watched (an old page's late message changes nothing).
    package mutating func acknowledged(_ version: String?) -> Int? {
        guard let watched, let version, version == watched.version else { return nil }
        self.watched = nil
        return watched.steps
    }

    /// The watched page threw (an uncaught `error` or `unhandledrejection`) before it
    /// acknowledged: kept, the first one only, as the cause a step reports.
    package mutating func pageError(_ message: String, version: String?) {
        guard let version, version == watched?.version, watched?.pageError == nil else { return }
        watched?.pageError = String(message.prefix(300))
    }

    /// The step due at `now`, if the deadline passed: the watch counts it and, for a
    /// reload or a cleared storage, waits `timeout` again from `now` (the page's new load);
    /// after ``Remedy/seed`` nothing is watched.
    package mutating func due(now: Duration) -> Step? {
        guard var current = watched, now >= current.since + timeout else { return nil }
        current.steps += 1
        let remedy: Remedy = current.steps == 1 ? .reload : current.steps == 2 ? .clearStorage : .seed
        let step = Step(
            version: current.version, number: current.steps, remedy: remedy,
            reason: current.pageError == nil ? "no-acknowledgement" : "page-error", pageError: current.pageError,
            cause: current.cause, waited: now - current.since)
        current.since = now
        current.pageError = nil
        watched = remedy == .seed ? nil : current
        return step
    }
}
