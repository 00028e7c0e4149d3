import ClientFoundation
import Foundation

extension Updater {
    /// The part of ``start(bridge:clock:shim:lockWait:)`` that runs with the root's lock
    /// held: finish interrupted deletions, notice a shell update, recover a trial left by
    /// a dead process, choose what to serve, organize it and persist the state.
    ///
    /// - Parameter keepServing: the disk is full: serve the version that runs (or the seed
    ///   rule's choice) rather than start a pending version's trial, so that nothing needs
    ///   to be written (docs/device-layout.md#a-full-disk).
    func startLocked(
        watchdog: inout Watchdog, followup: inout Followup, reset: inout Bool, clock: MonotonicClock, keepServing: Bool
    ) throws -> (DeviceState, Served) {
        try Trash.finishInterrupted(layout)
        var state = try loadState()
        reset = try noticeShellUpdate(&state)
        let installed = try storedVersions()
        let available = Set(installed.map(\.id))
        var actions: [WatchdogAction] = []
        if let trial = state.trial {
            let (wall, instant) = (now(), bootClock())
            let owner = TrialOwner.status(
                of: trial, session: lifecycle.session, now: wall, instant: instant, timeout: config.startupTimeout)
            if owner == .otherProcess, trial.version == state.current {
                throw UpdaterError(
                    .locked, "another process (pid \(trial.pid ?? 0)) runs a trial of \(trial.version) on \(layout.root); stop it first")
            }
            actions = watchdog.recover(
                state: &state, now: clock.now, wallClock: wall, instant: instant, owner: owner, available: available)
        }
        let failed = actions.contains { if case .report(.failed) = $0 { return true } else { return false } }
        if !failed, watchdog.phase == .idle {
            let seedID = try channel.embeddedVersion()?.id
            if let p = state.pending, state.blacklist.contains(p) || !(available.contains(p) || p == seedID) { state.pending = nil }
            // Pending first, then the seed rule; when the seed rule finds nothing (the
            // Meteor rule after its last download was blacklisted), the last known good
            // version rather than the embedded seed: the plugin's cold-start bug, fixed.
            let good = state.lastKnownGood.flatMap { id in
                installed.first { $0.id == id && !state.blacklist.contains(id) && $0.isCompatible(withShell: config.shellVersion) }
            }
            // Without a seed, the version that runs keeps running rather than nothing.
            let kept = !watchdog.hasSeed ? state.current.flatMap { available.contains($0) ? $0 : nil } : nil
            let running = state.current.flatMap { available.contains($0) && !state.blacklist.contains($0) ? $0 : nil }
            // A pending seed (the feed went back to the shell's own version) runs as the seed.
            let target: String?
            if keepServing, let running {
                target = running
            } else if let pending = state.pending, pending == seedID {
                state.pending = nil
                target = nil
            } else if let pending = state.pending, !keepServing {
                target = pending
            } else if let chosen = channel.select(from: installed, state: state) {
                target = chosen.isEmbedded ? nil : chosen.id
            } else {
                target = good?.id ?? kept
            }
            actions += watchdog.activate(
                target, state: &state, now: clock.now,
                trial: .thisProcess(session: lifecycle.session, at: now(), instant: bootClock()))
        }
        let served = try organizeOrFail(&watchdog, &state, available: available, actions: &actions)
        if !keepServing, let pending = state.pending, pending != state.current { _ = try? organizeForServing(pending) }
        channel.servingChanged(state: &state)
        try StateStore.save(state, layout)
        try performLocked(
            actions.filter { !$0.isReload },
            state: &state, followup: &followup)
        return (state, served)
    }
}
