import ApplyPolicy
import DeviceSetup
import Foundation

extension Updater {
    /// The pending version, if any, with its policy; reads `state.json` without the lock
    /// (the switch itself checks again under it).
    package nonisolated func stagedSwitch() -> StagedSwitch? {
        let state = StateStore.load(layout)
        guard let pending = state.pending, !state.blacklist.contains(pending) else { return nil }
        return StagedSwitch(
            version: pending, since: state.pendingSince, policy: channel.applyPolicy(for: pending) ?? .nextStart,
            trialRunning: state.trial != nil)
    }

    /// Switches to `version` because its apply policy allows it now: as
    /// ``reload(from:lockWait:)`` (a trial; the host reloads unless `reload` is false, when
    /// a navigation under way loads the new version itself), and a `switched` report whose
    /// `detail` is `trigger` and whose `ms` is the time since staging. `pageVersion`: the
    /// page that asks for it (`serve`), refused as ``reload(from:lockWait:)`` refuses.
    /// - Throws: ``UpdaterError`` `.conflict` when `version` is no longer pending, and what
    ///   ``reload(from:lockWait:)`` throws.
    @discardableResult
    package func switchStaged(
        _ version: String, trigger: String, from pageVersion: String? = nil, reload: Bool = true, lockWait: Duration = .seconds(30)
    ) async throws -> LifecycleReport {
        try await switchToPending(from: pageVersion, expected: version, trigger: trigger, reload: reload, lockWait: lockWait)
    }
}

extension Updater {
    /// What the staged version waits for, in one line for `status` (docs/apply-policies.md#status):
    /// the running host's own last decision (`apply-status.json`, when its process lives),
    /// else the decision from what the root alone knows (no input, no lease).
    /// nil when nothing is staged.
    nonisolated func applyLine(_ state: DeviceState, now t: Date) -> String? {
        guard let pending = state.pending else { return nil }
        let policy = channel.applyPolicy(for: pending) ?? .nextStart
        var head = "\(pending) staged"
        if let since = state.pendingSince { head += " since \(RFC3339Time.string(from: since))" }
        head += " (apply \(policy.summary))"
        if let host = ApplyStatus.read(layout), host.version == pending, host.pid > 0, kill(host.pid, 0) == 0 || errno == EPERM {
            var line = "\(head): \(host.line)"
            if let next = host.nextDecision, next > t {
                line += "; decides again in \(DurationText.render(seconds: Int(next.timeIntervalSince(t).rounded(.up))))"
            }
            return line + " (host pid \(host.pid), \(RFC3339Time.string(from: host.decidedAt)))"
        }
        let zone = (try? DeviceSettings.systemZone()) ?? TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let input = ApplyInput(
            policy: policy, stagedAt: state.pendingSince ?? t, hostStartedAt: t,
            windows: config.deviceSettings.maintenanceWindows(systemZone: zone), trialRunning: state.trial != nil)
        let decision = ApplyDecision.decide(input, now: t)
        var line = "\(head): "
        if case .switchNow(let trigger) = decision {
            line += "allowed now (\(trigger)); no running host has decided yet: a host switches at its next decision, a start runs it"
        } else {
            line += decision.description
            if let next = ApplyDecision.nextWake(input, now: t) {
                line += ", in \(DurationText.render(seconds: Int(next.timeIntervalSince(t).rounded(.up))))"
            }
            line += " (no running host has decided yet: this is without input or leases; a start runs it at once)"
        }
        return line
    }
}
