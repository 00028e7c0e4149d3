import Foundation

/// Rebuilds a lost `state.json` from what is on disk.
///
/// After power loss an unsynced state file can be empty or full of NULs. The versions
/// themselves were renamed into place only when complete, so they are the truth: the
/// corrupt file is kept aside for inspection, the channel restores what it can derive
/// from its installed versions (the archive channel: its monotonic floor), and `current` is left to selection at the next start.
enum StateRecovery {
    static func rebuild(layout: RootLayout, channel: any UpdateChannel, now: Date, persist: Bool) throws -> DeviceState {
        var state = DeviceState()
        let installed = try channel.installedVersions()
        channel.recover(state: &state, installed: installed)
        guard persist else { return state }
        let aside = layout.state + ".corrupt-\(Int(now.timeIntervalSince1970))"
        if rename(layout.state, aside) != 0 && errno != ENOENT {
            throw UpdaterError.io("cannot move aside corrupt state", path: layout.state, errno: errno)
        }
        try StateStore.save(state, layout)
        return state
    }
}
