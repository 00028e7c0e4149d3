/// What happened on a device: the `type` of a report (docs/fleet-reports.md#report-types).
///
/// A closed set: a collector refuses a batch naming any other type, so metrics labels and
/// the fleet page stay bounded.
public enum ReportKind: String, Sendable, CaseIterable, Codable {
    /// A host started; `running` is the version on screen.
    case start
    /// The device is alive (at most every few hours when nothing else is reported).
    case heartbeat
    /// A check found `version` newer than `running` and admitted for this device.
    case updateFound = "update-found"
    /// A check saw `version` but did not take it; `reason` says why.
    case checkRefused = "check-refused"
    /// A check failed before deciding (`reason`: network, http-status, no-space, …).
    case checkFailed = "check-failed"
    /// `version` was downloaded: `kind` archive or patch, `bytes`, `ms`.
    case downloaded
    /// A download of `version` failed; `reason` says how.
    case downloadFailed = "download-failed"
    /// `version` was installed (verified and organized), ready to switch to.
    case installed
    /// The device switched from `from` to the staged `version`: `detail` says what
    /// triggered it (docs/apply-policies.md#triggers), `ms` how long it was staged before.
    case switched
    /// `version` went on trial: the watchdog waits for the page to acknowledge.
    case trialStarted = "trial-started"
    /// The page of `version` acknowledged; `ms` from its load to the acknowledgement.
    case committed
    /// `version` was rolled back to `running`; `reason` says why.
    case rolledBack = "rolled-back"
    /// `version` will not be tried again on this device; `reason` says why.
    case blacklisted
    /// The native shell changed from `from` to `shell`.
    case shellUpdated = "shell-updated"
    /// The web process of the page showing `running` died; `reason` says how.
    case webProcessDied = "web-process-died"
    /// The journal dropped `count` older reports to stay within its bounds.
    case dropped
    /// The device's wall clock is wrong (`reason`: clock-behind, clock-ahead, floor-ahead);
    /// `detail` says by what and what the device decides by (docs/device-time.md#reports).
    case clockWrong = "clock-wrong"
    /// A check found `version` but its download waits (`reason`: window, metered, held);
    /// `detail` says until when. Once per episode: a device that defers the same release
    /// for the same reason at every check says so once (docs/download-policy.md#reports).
    case downloadDeferred = "download-deferred"
    /// The page of `version` (the version on screen) failed after its acknowledgement:
    /// `count` problems (uncaught errors, unhandled rejections, web process deaths, the
    /// app's own `reportProblem(kind)`; absent: none) over `ms` milliseconds of use, `detail`
    /// a few distinct messages. One per period of use (5 and 15 minutes, an hour, then
    /// every 6 hours), and when the version leaves the screen (docs/page-errors.md).
    case pageErrors = "page-errors"
}

/// Why something happened: the `reason` of a report. A closed set, so that reasons can be
/// counted and charted; the free text, if any, goes in `detail`.
public enum ReportReason: String, Sendable, CaseIterable, Codable {
    // A check that refused a release.
    /// A signature did not verify, or the key is not trusted.
    case signature
    /// The manifest (or the trust root) expired, or the device's clock is behind it.
    case expired
    /// The release is older than the device's floor (a rollback attempt).
    case floor
    /// The rollout has not reached this device's place yet (or is paused).
    case rollout
    /// The release's signed target does not admit this device (its labels or id;
    /// docs/targeting.md).
    case target
    /// The release needs another shell than this one.
    case needsShell = "needs-shell"
    /// The release was revoked by its channel.
    case revoked
    /// The release is blacklisted on this device after an earlier failure.
    case blacklisted
    /// The manifest was malformed or for another app or channel.
    case badRelease = "bad-release"
    // Transfers and storage.
    /// The disk is full, or the download cannot fit.
    case noSpace = "no-space"
    /// A connection failed (refused, reset, DNS, TLS) after retries.
    case network
    /// The peer stopped sending within the idle timeout.
    case timeout
    /// The server answered with a status that is not success.
    case httpStatus = "http-status"
    /// The bytes did not match the signed digest.
    case hashMismatch = "hash-mismatch"
    /// A body or archive was larger than allowed.
    case tooLarge = "too-large"
    /// The archive could not be unpacked or organized.
    case badArchive = "bad-archive"
    // A trial that failed, a rollback.
    /// The page did not acknowledge before the startup timeout.
    case timedOut = "timed-out"
    /// The page's web process crashed during the trial.
    case pageCrashed = "page-crashed"
    /// The host process died while the version was on trial.
    case processDied = "process-died"
    /// Someone rolled it back by hand (`clientctl rollback`).
    case byHand = "by-hand"
    /// The version could not be organized for serving.
    case cannotOrganize = "cannot-organize"
    // A web process that died.
    /// It crashed.
    case crashed
    /// It exceeded its memory limit.
    case outOfMemory = "out-of-memory"
    /// It was killed or ended from outside.
    case killed
    /// Anything else (the `detail` says what).
    case other
    // The device's clock (`clock-wrong`); last, so that the fleet page's colours of the
    // reasons before them stay as they were.
    /// The wall clock is behind the newest time the device verified, or behind the time servers.
    case clockBehind = "clock-behind"
    /// The wall clock is ahead of the time servers.
    case clockAhead = "clock-ahead"
    /// A signed time the device verified is later than the time servers vouch for.
    case floorAhead = "floor-ahead"
    // A download that waits (`download-deferred`; docs/download-policy.md).
    /// Outside every download window.
    case window
    /// The link is metered and the download policy does not allow this download over it.
    case metered
    /// A page or a local process holds downloads.
    case held
    // A version rolled back on the device after it started (docs/page-errors.md#local-rollback).
    /// Its page failed on most of its loads within its first hour of use.
    case pageErrors = "page-errors"
}
