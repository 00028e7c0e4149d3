import FleetReports
import Foundation

/// A report before the journal takes it: a ``FleetReport`` without its sequence number and
/// time, which ``ReportJournal/record(_:)`` assigns (docs/fleet-reports.md#report-types).
package struct ReportDraft: Sendable, Equatable {
    /// What happened.
    package var type: ReportKind
    /// The version on screen (or served) when it happened.
    package var running: String
    /// The native shell's version.
    package var shell: String?
    /// The version the report is about.
    package var version: String?
    /// For a shell update: the shell before.
    package var from: String?
    /// Why, for refusals, failures and rollbacks.
    package var reason: ReportReason?
    /// Free text (cut to ``FleetReport/maxDetailBytes`` when recorded).
    package var detail: String?
    /// How a download came.
    package var via: FleetReport.Transfer?
    /// Bytes downloaded.
    package var bytes: Int64?
    /// Of them, the bytes that came from a site mirror.
    package var mirrorBytes: Int64?
    /// Milliseconds (a download, or a trial's load to its acknowledgement).
    package var ms: Int64?
    /// For `dropped`: how many reports.
    package var count: Int64?
    /// The rollout the device saw.
    package var rollout: RolloutSeen?

    /// A draft of `type` while `running` is on screen; set the other fields as the type needs.
    package init(
        _ type: ReportKind, running: String, shell: String? = nil, version: String? = nil, reason: ReportReason? = nil,
        detail: String? = nil
    ) {
        self.type = type
        self.running = running
        self.shell = shell
        self.version = version
        self.reason = reason
        self.detail = detail
    }

    /// What makes two `check-refused` reports the same wait: the version, the reason, the
    /// detail, the rollout seen and the running version; nil for any other type.
    package var refusalKey: String? {
        guard type == .checkRefused else { return nil }
        let parts = [version ?? "", reason?.rawValue ?? "", detail ?? "", rollout.map { "\($0)" } ?? "", running]
        return parts.joined(separator: "\u{1F}")
    }

    /// The report with `seq` and `time`, its detail clipped to the model's bound.
    package func report(seq: Int64, time: Date) -> FleetReport {
        var r = FleetReport(seq: seq, time: time, type: type, running: running)
        r.shell = shell
        r.version = version
        r.from = from
        r.reason = reason
        r.detail = detail.map(FleetReport.clip)
        r.via = via
        r.bytes = bytes.map { max(0, $0) }
        r.mirrorBytes = mirrorBytes.map { max(0, $0) }
        r.ms = ms.map { max(0, $0) }
        r.count = count
        r.rollout = rollout
        return r
    }
}

/// What `clientctl status` shows of a device's reports: how many wait, how many were
/// dropped, and how the last delivery went.
package struct ReportJournalStatus: Sendable, Equatable {
    /// Reports recorded and not yet delivered.
    package var pending: Int
    /// Reports dropped to stay bounded or because they could not be written (a full disk,
    /// a journal another process held too long), since the root was made.
    package var dropped: Int64
    /// Journal lines that could not be read (a torn last line after a crash, a damaged line).
    package var unreadable: Int
    /// The last sequence number given out.
    package var lastSeq: Int64
    /// Every report up to this sequence number was delivered.
    package var deliveredThrough: Int64
    /// The last delivery attempt, if any.
    package var lastAttempt: DeliveryAttempt?
    /// When a delivery last succeeded, if ever.
    package var lastSuccess: Date?
    /// Every pending report can wait for company until then
    /// (``ReportDeliverySchedule/heldUntil(_:now:hold:)``); nil when something is due.
    package var heldUntil: Date?

    /// One delivery attempt: when, and why it failed (nil when it succeeded).
    package struct DeliveryAttempt: Sendable, Equatable {
        /// When it ended.
        package var time: Date
        /// Why it failed, one line; nil when the collector took the batch.
        package var failure: String?
    }
}
