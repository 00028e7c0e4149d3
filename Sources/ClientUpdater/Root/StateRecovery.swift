import Foundation

/// Rebuilds a lost `state.json` from what is on disk.
///
/// After power loss an unsynced state file can be empty or full of NULs. The versions
/// themselves were renamed into place only when complete, so they are the truth: the
/// corrupt file is kept aside for inspection, the monotonic floor is restored from the
/// highest installed version, and `current` is left to selection at the next start.
enum StateRecovery {
    static func rebuild(layout: RootLayout, channel: any UpdateChannel, now: Date, persist: Bool) throws -> DeviceState {
        var state = DeviceState()
        let installed = try channel.installedVersions()
        state.highestAccepted = installed.compactMap { Version($0.id) }.max()?.description
        guard persist else { return state }
        let aside = layout.state + ".corrupt-\(Int(now.timeIntervalSince1970))"
        if rename(layout.state, aside) != 0 && errno != ENOENT {
            throw UpdaterError.io("cannot move aside corrupt state", path: layout.state, errno: errno)
        }
        try StateStore.save(state, layout)
        return state
    }
}
