import DeviceSetup
import FleetReports
import Foundation
import Synchronization

extension ReportJournal {
    /// The journal of a root whose config names a report URL
    /// (``ReportDelivery/reportURL(config:)``, the rule the sender follows too); nil without
    /// one (nothing is recorded, nothing grows).
    package static func forRoot(_ layout: RootLayout, config: DeviceConfig, now: @escaping @Sendable () -> Date = Date.init)
        -> ReportJournal?
    {
        ReportDelivery.reportURL(config: config) == nil ? nil : ReportJournal(layout: layout, now: now)
    }
}

/// When a heartbeat is due: a pure decision on the journal's last report time and the
/// wall clock (docs/fleet-reports.md#report-types). A routine up-to-date check is not a
/// report; it records a heartbeat only when nothing was recorded for ``interval``.
package enum HeartbeatRule {
    /// At most one heartbeat per 6 hours.
    package static let interval: TimeInterval = 6 * 3600

    /// True when nothing was recorded since `now - interval` (or ever), or when the last
    /// report is in the future by more than `interval` (a clock set back).
    package static func isDue(lastRecorded: Date?, now: Date, interval: TimeInterval = Self.interval) -> Bool {
        guard let lastRecorded else { return true }
        let age = now.timeIntervalSince(lastRecorded)
        return age >= interval || age < -interval
    }
}

/// What the reports of one running check said so far.
final class CheckReportMemory: Sendable {
    struct Value {
        /// The version the check found (`update-found`), if any.
        var found: String?
        /// The channel reported something.
        var reported = false
    }
    let value = Mutex(Value())
}

extension Updater {
    /// Records one report: `running` (when the draft leaves it empty) is the version served
    /// now, `shell` the root's shell version. Does nothing without a journal.
    package nonisolated func recordReport(_ draft: ReportDraft) {
        guard let journal else { return }
        var draft = draft
        if draft.running.isEmpty { draft.running = currentVersion(in: StateStore.load(layout)) ?? "none" }
        if draft.shell == nil { draft.shell = config.shellVersion.description }
        journal.record(draft)
    }

    /// The reports of a watchdog event: trials started, committed (with the time from the
    /// trial's start to the acknowledgement), rolled back and blacklisted, revocations.
    nonisolated func recordWatchdog(_ event: WatchdogEvent, trialStartedAt: Date?) {
        guard journal != nil else { return }
        switch event {
        case .trialStarted(let version):
            recordReport(ReportDraft(.trialStarted, running: "", version: version))
        case .committed(let version):
            var draft = ReportDraft(.committed, running: version, version: version)
            if let trialStartedAt { draft.ms = Int64(max(0, now().timeIntervalSince(trialStartedAt)) * 1000) }
            recordReport(draft)
        case .failed(let version, let reason, let blacklisted, let revertedTo):
            let why = Self.reportReason(reason)
            let running = revertedTo.installedID ?? (try? channel.embeddedVersion())?.id ?? "none"
            recordReport(ReportDraft(.rolledBack, running: running, version: version, reason: why))
            if blacklisted { recordReport(ReportDraft(.blacklisted, running: running, version: version, reason: why)) }
        case .revoked(let version, let switchedTo):
            let running = switchedTo.installedID ?? (try? channel.embeddedVersion())?.id ?? "none"
            recordReport(ReportDraft(.rolledBack, running: running, version: version, reason: .revoked))
            recordReport(ReportDraft(.blacklisted, running: running, version: version, reason: .revoked))
        case .noTrial, .nothingToRollBack, .refused:
            break
        }
    }

    static func reportReason(_ reason: FailureReason) -> ReportReason {
        switch reason {
        case .timedOut: return .timedOut
        case .processDied: return .processDied
        case .rolledBack: return .byHand
        case .cannotOrganize: return .cannotOrganize
        case .pageCrashed: return .pageCrashed
        case .pageErrors: return .pageErrors
        }
    }

    /// The reporter's receiver for one check: fills `running`, remembers whether the check
    /// found a version (a failure after that is the download's) and whether the channel
    /// reported at all.
    nonisolated func checkReportReceiver(_ memory: CheckReportMemory) -> CheckReporter.Report? {
        guard journal != nil else { return nil }
        return { [self] draft in
            memory.value.withLock {
                $0.reported = true
                if draft.type == .updateFound { $0.found = draft.version }
            }
            recordReport(draft)
        }
    }

    /// The report of a check that threw: a download's failure when the check had found a
    /// version, a refusal when the channel says the release was refused (signature,
    /// expiry, a bad release), else a failed check; `reason` from the channel, else from
    /// the core's error codes.
    nonisolated func recordCheckFailure(_ error: any Error, found: String?) {
        guard journal != nil else { return }
        let reason = channel.reportReason(for: error) ?? Self.coreReportReason(error)
        let detail = "\(error)"
        if let found {
            recordReport(ReportDraft(.downloadFailed, running: "", version: found, reason: reason, detail: detail))
        } else if [.signature, .expired, .badRelease, .floor, .revoked].contains(reason) {
            recordReport(ReportDraft(.checkRefused, running: "", version: nil, reason: reason, detail: detail))
        } else {
            recordReport(ReportDraft(.checkFailed, running: "", reason: reason, detail: detail))
        }
    }

    /// The reason of a failure the core knows: its transport, digest, size and disk errors.
    static func coreReportReason(_ error: any Error) -> ReportReason {
        if DiskSpace.isNoSpace(error) { return .noSpace }
        if let failure = error as? TransportFailure { return transportReason(failure) }
        guard let error = error as? UpdaterError else { return .other }
        if let failure = error.underlying as? TransportFailure { return transportReason(failure) }
        switch error.code {
        case .network: return error.message.contains("timed out") ? .timeout : .network
        case .httpStatus: return .httpStatus
        case .tooLarge: return .tooLarge
        case .hashMismatch: return .hashMismatch
        case .noSpace: return .noSpace
        default: return .other
        }
    }

    static func transportReason(_ failure: TransportFailure) -> ReportReason {
        switch failure {
        case .timedOut, .connectTimedOut, .deadlineExceeded: return .timeout
        default: return .network
        }
    }

    /// After a check: a `clock-wrong` report when the wall clock is wrong and was not
    /// reported so already (once per episode; docs/device-time.md#reports).
    nonisolated func recordClockVerdict() {
        guard let clock else { return }
        let status = clock.status()
        guard status.verdict.isWrong else {
            _ = clock.markReported(.trusted)
            return
        }
        guard journal != nil, clock.markReported(status.verdict) else { return }
        let reason: ReportReason =
            status.verdict == .floorAheadOfAuthenticated ? .floorAhead : status.verdict == .aheadOfAuthenticated ? .clockAhead : .clockBehind
        recordReport(ReportDraft(.clockWrong, running: "", reason: reason, detail: status.line))
    }

    /// After a check: `installed` for a version it stored, a heartbeat for a routine
    /// up-to-date check when nothing was recorded for a while.
    nonisolated func recordCheckOutcome(_ outcome: CheckOutcome, channelReported: Bool) {
        guard let journal else { return }
        switch outcome {
        case .installed(let version):
            recordReport(ReportDraft(.installed, running: "", version: version.id))
        case .upToDate:
            if HeartbeatRule.isDue(lastRecorded: journal.lastRecordedAt(), now: now()) {
                recordReport(ReportDraft(.heartbeat, running: ""))
            }
        case .noCompatibleRelease(let why) where !channelReported:
            recordReport(ReportDraft(.checkRefused, running: "", reason: .needsShell, detail: why))
        case .stale(let why) where !channelReported:
            recordReport(ReportDraft(.checkRefused, running: "", reason: .expired, detail: why))
        case .skipped(let why) where !channelReported:
            recordReport(ReportDraft(.checkRefused, running: "", reason: .other, detail: why))
        case .noCompatibleRelease, .stale, .skipped, .deferred:
            break
        }
    }
}

extension Updater {
    /// ``status()`` with its ``StatusReport/explanation`` (`status --explain`): why this
    /// version runs and not a newer one, from the last check, the state and the journal.
    package func explainedStatus() throws -> StatusReport {
        var report = try status()
        report.explanation = StatusExplanation.lines(report, recent: ReportJournal(layout: layout, now: now).recent())
        return report
    }
}

extension Updater {
    /// A host's page died (the shell's `web-process-terminated`): a `web-process-died`
    /// report, its reason from WebKit's (`crashed`, `exceeded-memory`, anything else is
    /// `killed`). `running`: the version of the page, else the one served now.
    package nonisolated func recordWebProcessDied(webKitReason: String, running: String?) {
        guard journal != nil else { return }
        let reason: ReportReason =
            switch webKitReason {
            case "crashed": .crashed
            case "exceeded-memory": .outOfMemory
            default: .killed
            }
        var draft = ReportDraft(.webProcessDied, running: running ?? "", reason: reason)
        draft.detail = webKitReason
        recordReport(draft)
    }
}
