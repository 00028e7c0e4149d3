import ApplyPolicy
import ClientFoundation
import ClientUpdater
import DeviceSetup
import FleetReports
import Foundation
import SignedManifest

/// What a check reads, beyond the settings, to decide whether it may download a release now
/// (docs/download-policy.md): whether the link is metered, and the holds in force.
package struct DownloadGate: Sendable {
    /// Reads whether the link is metered (NetworkManager, the settings' override, a test's).
    package var probe: any MeteredLinkProbe
    /// The holds of pages and local processes (none for a one-shot command).
    package var holds: any DownloadHolding
    /// The monotonic clock a running download waits on for its window to close.
    package var clock: MonotonicClock

    /// A gate; the defaults are a one-shot command's: a link that is not metered, no holds.
    package init(
        probe: any MeteredLinkProbe = FixedLinkProbe(), holds: any DownloadHolding = NoDownloadHolds(), clock: MonotonicClock = .continuous
    ) {
        self.probe = probe
        self.holds = holds
        self.clock = clock
    }
}

/// A download stopped because the policy no longer allows it (a hold taken while it ran, a
/// patch that failed where only patches may come over a metered link): the check ends
/// deferred, keeping what it downloaded.
struct DownloadStopped: Error {
    let deferral: DownloadDeferral

    /// Over a metered link that takes only patches, the patch of `release` did not apply
    /// (`note` says why): the full archive waits for another link.
    static func meteredPatchOnly(release: Version, note: String?) -> DownloadStopped {
        DownloadStopped(
            deferral: DownloadDeferral(
                reason: .metered, reasons: [.metered], until: nil,
                description: "download deferred: the link is metered and takes only patches, and the patch does not apply"
                    + (note.map { " (\($0))" } ?? "") + "; the full archive waits for a link that is not metered"))
    }
}

/// How ``ArchiveInstaller/racingStops(_:release:policy:allowedAt:)``'s tasks end.
private enum RaceFinish<T: Sendable>: Sendable {
    case finished(Result<T, any Error>)
    case held
    /// The download windows closed.
    case closed(Date)
    /// A watcher cancelled: the download ended first.
    case notStopped
}

extension ArchiveInstaller {
    /// The settings' download policy as `config.json` holds it now (`clientctl download set`
    /// changes it while an agent runs), windows without a zone read in the device's.
    func currentDownloadPolicy() -> DownloadPolicy {
        let settings = (try? DeviceConfig.load(layout))?.deviceSettings ?? config.deviceSettings
        let zone = (try? DeviceSettings.systemZone()) ?? TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return settings.downloadPolicy(systemZone: zone)
    }

    /// The patch this device would take for `release`: the smallest one from a version it
    /// holds that is smaller than the archive (``DeltaInstall``'s choice); nil when it would
    /// take the full archive.
    func plannedPatch(_ release: Manifest) -> ReleaseDelta.Patch? {
        guard channel.options.useDelta, channel.media == nil, case .success(let delta)? = release.delta else { return nil }
        let held = Set(((try? channel.store.installedVersions()) ?? []).map(\.id))
        return delta.patches.filter { held.contains($0.from.description) && $0.size < release.size }.min { $0.size < $1.size }
    }

    /// Whether `release` may download now; the deferral when not. Reads the link only when
    /// the policy cares about it, the holds always. A check from offline media downloads
    /// nothing: the policy does not apply to it (docs/download-policy.md#what-it-is).
    func downloadVerdict(_ release: Manifest, policy: DownloadPolicy, now: Date) async -> (DownloadVerdict, patchOnly: Bool) {
        guard channel.media == nil else { return (.allowed(note: nil), false) }
        let patch = plannedPatch(release)
        var metered = false
        var source: String?
        if policy.metered != .always {
            let reading = await channel.downloadGate.probe.read()
            metered = reading.metered
            source = reading.source
        }
        let request = DownloadRequest(
            now: now, metered: metered, holdUntil: channel.downloadGate.holds.current()?.until, size: patch?.size ?? release.size,
            isPatch: patch != nil, applyDeadline: release.apply?.deadline)
        var verdict = policy.decide(request)
        if case .deferred(var deferral) = verdict, deferral.reasons.contains(.metered), let source {
            deferral.description += " (\(source))"
            verdict = .deferred(deferral)
        }
        // Over a metered link that allows this patch and not the archive, only the patch may come.
        let patchOnly = metered && !policy.allowsMetered(size: release.size, isPatch: false)
        return (verdict, patchOnly)
    }

    /// Reports a deferral once per episode (a release and a reason), records the episode in
    /// `state`, and says it as the check's outcome.
    func deferral(_ deferral: DownloadDeferral, of release: Manifest, state: inout DeviceState) -> CheckOutcome {
        let episode = "\(release.version) \(deferral.reason.rawValue)"
        if state.archive.downloadDeferred != episode {
            let reason: ReportReason =
                switch deferral.reason {
                case .window: .window
                case .metered: .metered
                case .held: .held
                }
            reporter.report(.downloadDeferred, version: release.version.description, reason: reason, detail: deferral.description)
            state.archive.downloadDeferred = episode
        }
        channel.logger.info("release \(release.version): \(deferral.description)")
        return .deferred("release \(release.version): \(deferral.description)", until: deferral.until)
    }

    /// Runs `download` until it ends, a hold is taken or the download windows close (the
    /// device's wall clock reaches ``DownloadPolicy/windowsClose(after:applyDeadline:)``),
    /// whichever comes first. A hold or a closing stops it (cancelled: what arrived stays,
    /// the archive's partial file as the per-file path's list and objects, and the next
    /// allowed check resumes it with Range) and throws ``DownloadStopped`` with reason held
    /// or window. A download that ends meanwhile keeps its result.
    /// - Parameter allowedAt: when the policy allowed the download (the check's time).
    func racingStops<T: Sendable>(
        _ download: @escaping @Sendable () async throws -> T, release: Manifest, policy: DownloadPolicy, allowedAt: Date
    ) async throws -> T {
        let holds = channel.downloadGate.holds
        let clock = channel.downloadGate.clock
        let now = channel.now
        let closes = policy.windowsClose(after: allowedAt, applyDeadline: release.apply?.deadline)
        var stop: RaceFinish<T>?
        let finished: Result<T, any Error>? = await withTaskGroup(of: RaceFinish<T>.self) { group in
            group.addTask {
                do { return .finished(.success(try await download())) } catch { return .finished(.failure(error)) }
            }
            group.addTask {
                do {
                    try await holds.waitForHold()
                    return .held
                } catch {
                    return .notStopped
                }
            }
            if !policy.windows.isEmpty {
                group.addTask {
                    // The wall clock decides (a window is wall-clock time); the waits are on the
                    // monotonic clock, at most 30 s each, so a wall clock that jumps is seen soon:
                    // set forward past the close, or set back out of the window (the close
                    // reckoned at the start is then hours away, and would let the download run).
                    var closing = closes
                    while true {
                        let current = now()
                        if let closing, current >= closing { return .closed(closing) }
                        let request = DownloadRequest(now: current, size: release.size, applyDeadline: release.apply?.deadline)
                        if case .deferred(let deferral) = policy.decide(request), deferral.reasons.contains(.window) {
                            return .closed(current)
                        }
                        closing = policy.windowsClose(after: current, applyDeadline: release.apply?.deadline)
                        let left = closing.map { Duration.wallClock(from: current, to: $0) } ?? .seconds(30)
                        do { try await clock.sleep(for: min(max(left, .zero), .seconds(30))) } catch { return .notStopped }
                    }
                }
            }
            while let next = await group.next() {
                switch next {
                case .finished(let result):
                    group.cancelAll()
                    // A download a stop cancelled ends in an error: the stop's deferral says it.
                    if stop != nil, case .failure = result { return nil }
                    return result
                case .held, .closed:
                    if stop == nil { stop = next }
                    group.cancelAll()
                case .notStopped:
                    continue
                }
            }
            return nil
        }
        if let finished { return try finished.get() }
        if case .closed(let closed) = stop {
            let next = policy.decide(DownloadRequest(now: closed, size: release.size, applyDeadline: release.apply?.deadline))
            let until: Date? = if case .deferred(let deferral) = next { deferral.until } else { nil }
            let windows = policy.windows.map(\.description).joined(separator: ", ")
            throw DownloadStopped(
                deferral: DownloadDeferral(
                    reason: .window, reasons: [.window], until: until,
                    description: "download deferred: the download windows (\(windows)) closed at \(RFC3339Time.string(from: closed)) "
                        + "while it ran; it resumes from where it stopped"
                        + (until.map { " from \(RFC3339Time.string(from: $0))" } ?? "")))
        }
        let hold = holds.current()
        let until = hold?.until
        let who = hold.map { " by \($0.holders.joined(separator: ", "))" } ?? ""
        throw DownloadStopped(
            deferral: DownloadDeferral(
                reason: .held, reasons: [.held], until: until,
                description: "download deferred: a hold was taken\(who) while it ran; it resumes from where it stopped"
                    + (until.map { " from \(RFC3339Time.string(from: $0))" } ?? "")))
    }
}
