import FleetReports

/// Where the events of one check go while it runs: how an install went about it, in one
/// line each ("patch from 1.2.0: 51,234 bytes instead of the 3,101,877-byte archive", or
/// why it fell back to the full archive), and how far a download is.
///
/// The ``Updater`` passes one to ``UpdateChannel/check(state:reporter:)``; the channel
/// hands it on down its download and install path, onto whatever thread the transport
/// reports bytes on: a plain value, nothing bound to a task. The updater's reporter
/// turns each report into ``UpdaterEvent/installNote(_:)`` or
/// ``UpdaterEvent/downloadProgress(version:completed:total:)`` on its event stream,
/// in order (`clientctl install` prints notes on stderr and draws the progress bar; a
/// host app may log them). Reports never change what a check does.
package struct CheckReporter: Sendable {
    /// Receives one install note.
    package typealias Note = @Sendable (String) -> Void
    /// Receives `(version, completedBytes, totalBytes)`.
    package typealias Progress = @Sendable (String, Int64, Int64?) -> Void
    /// Receives one fleet report of the check (its `running` and `shell` are the updater's to fill).
    package typealias Report = @Sendable (ReportDraft) -> Void

    private let onNote: Note?
    private let onProgress: Progress?
    private let onReport: Report?

    package init(note: Note? = nil, progress: Progress? = nil, report: Report? = nil) {
        self.onNote = note
        self.onProgress = progress
        self.onReport = report
    }

    /// Tells the updater's report journal what the check found, refused, downloaded or
    /// failed (docs/fleet-reports.md#report-types): the channel's structured outcome, one
    /// report per step. `running` and `shell` are filled by the updater.
    package func report(
        _ type: ReportKind, version: String? = nil, reason: ReportReason? = nil, detail: String? = nil,
        rollout: RolloutSeen? = nil, via: FleetReport.Transfer? = nil, bytes: Int64? = nil, ms: Int64? = nil,
        mirrorBytes: Int64? = nil
    ) {
        guard let onReport else { return }
        var draft = ReportDraft(type, running: "", version: version, reason: reason, detail: detail)
        draft.rollout = rollout
        draft.via = via
        draft.bytes = bytes
        draft.mirrorBytes = mirrorBytes
        draft.ms = ms
        onReport(draft)
    }

    /// Reports nothing (a channel's check called on its own).
    package static let silent = CheckReporter()

    /// Hands `note` on.
    package func note(_ note: String) { onNote?(note) }

    /// Tells how far the download of `version` is.
    package func progress(version: String, completed: Int64, total: Int64?) { onProgress?(version, completed, total) }

    /// The progress receiver, for a downloader's byte counter; nil when nobody listens.
    package var progressHandler: Progress? { onProgress }
}
