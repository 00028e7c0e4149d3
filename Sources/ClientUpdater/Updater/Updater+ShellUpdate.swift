import FleetReports
import Foundation

extension Updater {
    /// The one shell-update rule, for every channel (Meteor's `lastSeenInitialVersion`):
    /// when the embedded seed differs from the one seen at the last start or check, the
    /// downloaded versions may need the old shell, so they and their serving folders go,
    /// the core's state starts over and the channel keeps what stays true
    /// (``UpdateChannel/shellUpdated(state:)``: the archive channel its monotonic floor,
    /// Meteor its appId and ROOT_URL). A root that never recorded a seed only records it,
    /// so a download interrupted on the very first run stays resumable.
    ///
    /// Called with the root's lock held, before `start` selects and before every check.
    /// - Returns: true when the root was reset (`state` must then be persisted).
    @discardableResult
    func noticeShellUpdate(_ state: inout DeviceState) throws -> Bool {
        guard let embedded = try channel.embeddedVersion() else { return false }
        defer { state.lastSeenEmbeddedVersion = embedded.id }
        guard let seen = state.lastSeenEmbeddedVersion, seen != embedded.id else { return false }
        for version in try storedVersions() { try channel.remove(version) }
        for name in Retention.servingEntries(layout) where !name.hasPrefix(".") && name != embedded.id && name != embedded.id + ".json" {
            try Trash.discard(layout.serving + "/" + name)
        }
        var fresh = DeviceState()
        fresh.channelMemory = state.channelMemory
        try channel.shellUpdated(state: &fresh)
        state = fresh
        var report = ReportDraft(.shellUpdated, running: embedded.id, shell: config.shellVersion.description)
        report.from = seen
        recordReport(report)
        return true
    }
}
