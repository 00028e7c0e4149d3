import ApplyPolicy
import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import SignedManifest

extension DeviceConfig.ChannelKind {
    /// Channel 1: signed archives from a release folder (`clientctl publish`).
    package static let signedArchive = Self(rawValue: "signed-archive")
}

/// The signed-archive channel's keys of `config.json`.
package struct ArchiveSettings: ChannelSettings {
    /// Release channel name (`stable`).
    package var channel: String
    /// Where `manifest.json` lives (https:, http: to loopback, or file:).
    package var manifestURL: String
    /// PEM SubjectPublicKeyInfo text of every trusted Ed25519 key (`init --trust`): the
    /// implicit root (threshold 1) until the channel publishes `root/1.json`.
    package var trustedKeys: [String]
    /// True when `init --trust-root` pinned a signed root: trust comes from `trust/<N>.json`.
    package var pinnedRoot: Bool?

    package init(channel: String, manifestURL: String, trustedKeys: [String], pinnedRoot: Bool? = nil) {
        self.channel = channel
        self.manifestURL = manifestURL
        self.trustedKeys = trustedKeys
        self.pinnedRoot = pinnedRoot
    }

    /// The channel name rule, the trust rule and the URL rules of ``URLPolicy``.
    package func problem(in config: DeviceConfig) -> String? {
        if let problem = ReleaseIdentifier.channel.problem(channel) { return "channel: \(problem)" }
        if trustedKeys.isEmpty, pinnedRoot != true {
            return "trustedKeys is empty: a signed-archive root must trust at least one key (or pin a root)"
        }
        guard let url = URL(string: manifestURL), url.scheme != nil else { return "manifestURL is missing or not an absolute URL" }
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: url.isFileURL, allowInsecureHTTP: config.allowInsecureHTTP) {
            return "manifestURL: \(why)"
        }
        return nil
    }
}

/// What the signed-archive channel remembers in `state.json`.
package struct ArchiveMemory: Codable, Sendable, Equatable {
    /// Monotonic floor: the highest release ever accepted; nothing at or below it is
    /// installed again (a replayed older manifest is refused).
    package var highestAccepted: String?
    /// The ETag of the last manifest fetched, for conditional GET.
    package var manifestETag: String?
    /// The `published` time (RFC 3339) of the newest manifest accepted: an older one is a
    /// replay and decides nothing.
    package var newestPublished: String?
    /// The ETag of the kept `restriction.json` (``RootLayout/keptRestriction``), for
    /// conditional GET.
    package var restrictionETag: String?
    /// The apply policy of the rollout role's restriction in force at the last check
    /// (docs/apply-policies.md): for `version`, until `expires`.
    package var restrictedApply: RestrictedApply?

    /// A restriction's apply policy, kept for the version it restricts.
    package struct RestrictedApply: Codable, Sendable, Equatable {
        package var version: String
        package var expires: Date
        package var policy: ApplyPolicy
    }

    package init(highestAccepted: String? = nil, manifestETag: String? = nil, newestPublished: String? = nil, restrictionETag: String? = nil) {
        self.highestAccepted = highestAccepted
        self.manifestETag = manifestETag
        self.newestPublished = newestPublished
        self.restrictionETag = restrictionETag
    }
}

extension DeviceState {
    /// The signed-archive channel's memory of this state.
    package var archive: ArchiveMemory {
        get { memory(ArchiveMemory.self) ?? ArchiveMemory() }
        set { setMemory(newValue) }
    }
}
