import ApplyPolicy
import ClientFoundation
import DeviceSetup
import FleetReports
import Foundation

/// A source of client versions: the signed-archive channel or Meteor hot code push.
///
/// A channel owns fetching, verifying and storing its versions and knows how its
/// versions are laid out. Everything after that — selection policy, organizer,
/// watchdog, retention, serving — is the shared pipeline's and never channel-specific.
/// Every method is called with the root's lock held.
package protocol UpdateChannel: Sendable {
    /// Complete, verified versions in the store (never partial downloads).
    func installedVersions() throws -> [InstalledVersion]

    /// The read-only seed shipped inside the shell, if the root has one.
    func embeddedVersion() throws -> InstalledVersion?

    /// Checks the feed once and, when a newer acceptable version exists, downloads,
    /// verifies and stores it. It does not switch versions: the caller stages the
    /// returned version as pending. State changes (ETag, floor, Meteor memory) are made
    /// on `state`; the caller persists them. Install notes and download progress go to
    /// `reporter` as they happen.
    func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome

    /// The seed rule: which installed version a fresh start should run; the embedded
    /// seed when the rule names it, `nil` when the rule finds nothing (the updater then
    /// falls back to the last known good version, else the seed).
    func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion?

    /// Deletes an installed version's files (retention, shell-update reset).
    func remove(_ version: InstalledVersion) throws

    /// Every file of a version keyed by URL path, including files it inherits from a
    /// parent bundle: what the organizer lays out under `serving/<id>/`.
    func servedAssets(for version: InstalledVersion) throws -> [ServedAsset]

    /// After a shell update the core has removed every downloaded version and serving
    /// folder and started `state` over; `state.channelMemory` still holds the channel's
    /// memory from before, and the channel keeps what stays true for the new shell.
    /// The default forgets it all.
    func shellUpdated(state: inout DeviceState) throws

    /// `state.json` was lost (power loss) and `state` is being rebuilt from the complete
    /// versions on disk: the channel restores what it can derive from them.
    /// The default restores nothing.
    func recover(state: inout DeviceState, installed: [InstalledVersion])

    /// The version served is about to change to `state.current` (`nil` = the seed) and
    /// `state` to be saved: the channel updates what it derives from the version in use
    /// (Meteor: appId, ROOT_URL and compatibility version). The default does nothing.
    func servingChanged(state: inout DeviceState)

    /// What `status` shows of the channel: its release channel's name and the monotonic
    /// floor, when it has them.
    func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary

    /// The fleet report reason of an error the channel's check threw (a signature that
    /// did not verify, an expired manifest, a bad release); nil leaves it to the core's
    /// transport and disk reasons. The default knows none.
    func reportReason(for error: any Error) -> ReportReason?

    /// The apply policy signed with an installed version (docs/apply-policies.md): when a
    /// device that staged it switches to it. nil: none (`next-start`). The default has none.
    func applyPolicy(for version: String) -> ApplyPolicy?
}

extension UpdateChannel {
    package func shellUpdated(state: inout DeviceState) throws { state.channelMemory = ChannelSection() }
    package func recover(state: inout DeviceState, installed: [InstalledVersion]) {}
    package func servingChanged(state: inout DeviceState) {}
    package func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary { ChannelSummary() }
    package func reportReason(for error: any Error) -> ReportReason? { nil }
    package func applyPolicy(for version: String) -> ApplyPolicy? { nil }
}

/// The channel's lines of `status` (and their `--json` keys).
package struct ChannelSummary: Sendable, Equatable {
    /// The release channel the root follows (`stable`).
    package var channel: String?
    /// The highest version ever accepted: nothing older is installed again.
    package var highestAccepted: String?
    /// The version of the signed trust root the device follows (0: its `--trust` keys).
    package var trustRoot: Int?
    /// What the channel says about the version it stages or runs, in one line (Meteor: a
    /// version that only renames the seed's build).
    package var note: String?
    /// The trust root's own channel, when the device follows another one its owner chose
    /// (docs/targeting.md#choosing-a-channel).
    package var rootChannel: String?
    /// Every channel the trust root lets the device follow, its own included, sorted.
    package var choosableChannels: [String]?
    /// Why the device does not follow the channel chosen, or that it moves at its next check.
    package var choiceNote: String?
    /// Where the running version came from (`offline media exported …`, `the feed`); nil
    /// when the channel does not say or nothing installed runs.
    package var currentSource: String?

    package init(channel: String? = nil, highestAccepted: String? = nil, trustRoot: Int? = nil, note: String? = nil) {
        self.channel = channel
        self.highestAccepted = highestAccepted
        self.trustRoot = trustRoot
        self.note = note
    }
}

/// One complete version in the store (or the embedded seed).
package struct InstalledVersion: Sendable, Equatable, Hashable {
    /// The channel's version string (`1.2.0`, or a Meteor version hash).
    package var id: String
    /// The folder holding the version's files.
    package var directory: String
    /// Shell compatibility range, when the channel has one.
    package var minShell: Version?
    package var maxShell: Version?
    /// When the version was installed (retention removes the oldest first).
    package var installedAt: Date?
    /// True for the embedded seed (never deleted).
    package var isEmbedded: Bool

    package init(
        id: String, directory: String, minShell: Version? = nil, maxShell: Version? = nil,
        installedAt: Date? = nil, isEmbedded: Bool = false
    ) {
        self.id = id
        self.directory = directory
        self.minShell = minShell
        self.maxShell = maxShell
        self.installedAt = installedAt
        self.isEmbedded = isEmbedded
    }

    /// True when a shell of `shell` may run this version.
    package func isCompatible(withShell shell: Version) -> Bool {
        if let min = minShell, shell < min { return false }
        if let max = maxShell, max < shell { return false }
        return true
    }
}

/// What one update check did.
package enum CheckOutcome: Sendable, Equatable {
    /// A new version was verified and stored; stage it as pending.
    case installed(InstalledVersion)
    /// The feed offers nothing newer than what the device has.
    case upToDate(String)
    /// The newest release needs another shell and nothing compatible is newer.
    case noCompatibleRelease(String)
    /// The feed is past its `expires`: the device keeps what it has.
    case stale(String)
    /// The feed offered something the device skipped by policy (blacklisted, incompatible
    /// Meteor compatibility version); the message says why.
    case skipped(String)
    /// A release was found and verified but its download waits: outside a download window,
    /// on a metered link, or under a hold (docs/download-policy.md); the message says why,
    /// `until` is the first moment it may download (`nil`: only the link can change it).
    case deferred(String, until: Date?)

    /// A one-line summary for people.
    package var message: String {
        switch self {
        case .installed(let v): return "installed \(v.id)"
        case .upToDate(let m), .noCompatibleRelease(let m), .stale(let m), .skipped(let m), .deferred(let m, _): return m
        }
    }
}

extension UpdateChannel {
    /// ``check(state:reporter:)`` reporting nothing (a channel's check on its own).
    package func check(state: inout DeviceState) async throws -> CheckOutcome {
        try await check(state: &state, reporter: .silent)
    }
}
