import Foundation

/// What one update check ended in (``InstallReport/result``); its raw value is the
/// `result` of `install --json` and of `last-check.json`.
public enum InstallResult: String, Codable, Sendable, CaseIterable {
    /// A new version was verified, stored and staged as pending.
    case installed
    /// An installed version was staged again (e.g. the second trial of a version on the
    /// retry list).
    case staged
    /// The feed offers nothing newer than what the device has.
    case upToDate = "up-to-date"
    /// The newest release needs another shell and nothing compatible is newer.
    case noCompatibleRelease = "no-compatible-release"
    /// The feed is past its `expires`: the device keeps what it has.
    case stale
    /// The feed offered something the device skipped by policy.
    case skipped
    /// A release was found but its download waits (docs/download-policy.md).
    case deferred
}

/// What `install` did, as printed by the command (and its `--json` shape).
public struct InstallReport: Codable, Sendable, Equatable {
    public var result: InstallResult
    /// The version installed, when one was.
    public var version: String?
    /// The version now pending (waits for a reload or the next start).
    public var pending: String?
    public var message: String
    /// When a deferred download may start (not in `--json`): the agent checks again then.
    package var deferredUntil: Date?

    enum CodingKeys: String, CodingKey {
        case result, version, pending, message
    }

    package init(outcome: CheckOutcome) {
        message = outcome.message
        switch outcome {
        case .installed(let v):
            result = .installed
            version = v.id
        case .upToDate: result = .upToDate
        case .noCompatibleRelease: result = .noCompatibleRelease
        case .stale: result = .stale
        case .skipped: result = .skipped
        case .deferred(_, let until):
            result = .deferred
            deferredUntil = until
        }
    }

    /// An installed version staged again by the check; `retry` when a trial of it failed once.
    static func staged(_ id: String, retry: Bool) -> InstallReport {
        var report = InstallReport(outcome: .upToDate(""))
        report.result = .staged
        report.version = id
        report.message =
            retry
            ? "staged \(id) again: its trial failed once and it gets one more (retry list); it runs after a reload or the next start"
            : "staged \(id), installed earlier: it runs after a reload or the next start"
        return report
    }
}
