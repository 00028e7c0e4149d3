import ClientFoundation
import Foundation

/// One thing that happened on one device: a line of the device's report journal and an
/// element of a batch's `reports` (docs/fleet-reports.md#a-report).
public struct FleetReport: Sendable, Equatable {
    /// The device's sequence number, 1, 2, …: a collector keeps one report per (device, seq).
    public var seq: Int64
    /// When it happened, by the device's clock (whole milliseconds on the wire).
    public var time: Date
    /// What happened.
    public var type: ReportKind
    /// The version on screen (or served) when it happened: a SemVer, or the embedded seed's id.
    public var running: String
    /// The native shell's version, when a shell hosts the page.
    public var shell: String?
    /// The version the report is about (the one offered, downloaded, on trial, rolled back).
    public var version: String?
    /// For ``ReportKind/shellUpdated``: the shell version before.
    public var from: String?
    /// Why, for refusals, failures and rollbacks.
    public var reason: ReportReason?
    /// Free text that says more (at most ``FleetReport/maxDetailBytes`` bytes).
    public var detail: String?
    /// For ``ReportKind/downloaded``: how the bytes came.
    public var via: Transfer?
    /// Bytes downloaded.
    public var bytes: Int64?
    /// For ``ReportKind/downloaded``: how many of the bytes came from a site mirror
    /// (docs/site-mirror.md#devices); nil when the device has no mirror.
    public var mirrorBytes: Int64?
    /// Milliseconds: a download's duration, or from a trial's load to its acknowledgement.
    public var ms: Int64?
    /// For ``ReportKind/dropped``: how many older reports the journal dropped.
    public var count: Int64?
    /// The rollout the device saw for `version` (checks): its percent and whether paused.
    public var rollout: RolloutSeen?

    /// How a downloaded version came.
    public enum Transfer: String, Sendable, Codable {
        /// The whole archive.
        case archive
        /// A delta patch to an installed version.
        case patch
        /// Meteor hot code push's changed files.
        case files
    }

    /// The longest `detail`, in UTF-8 bytes (longer text is cut by ``init(seq:time:type:running:)``'s users with ``clip(_:)``).
    public static let maxDetailBytes = 200

    /// A report with only the required fields; set the others as the type needs.
    public init(seq: Int64, time: Date, type: ReportKind, running: String) {
        self.seq = seq
        self.time = time
        self.type = type
        self.running = running
    }

    /// `text` cut to ``maxDetailBytes`` on a character boundary, control characters replaced by spaces.
    public static func clip(_ text: String) -> String {
        var out = ""
        var used = 0
        for ch in text {
            // C0, DEL, C1 and bidi controls become a space: a collector's words reach a terminal.
            let c: Character = ch.unicodeScalars.contains(where: TerminalText.isControl) ? " " : ch
            let n = String(c).utf8.count
            if used + n > maxDetailBytes { break }
            out.append(c)
            used += n
        }
        return out
    }
}

/// The rollout a device saw for a version: the percent in force and whether it was paused.
public struct RolloutSeen: Sendable, Equatable, Codable {
    /// 0–100.
    public var percent: Int
    /// The rollout was paused.
    public var paused: Bool

    /// A rollout seen at `percent`.
    public init(percent: Int, paused: Bool = false) {
        self.percent = percent
        self.paused = paused
    }
}
