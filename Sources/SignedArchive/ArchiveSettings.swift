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
    /// Release channel name (`stable`): the channel of the device's trust root, which it
    /// follows unless its owner chose another (``chosenChannel``).
    package var channel: String
    /// Where `manifest.json` of ``channel`` lives (https:, http: to loopback, or file:);
    /// the trust roots are walked beside it whichever channel the device follows.
    package var manifestURL: String
    /// PEM SubjectPublicKeyInfo text of every trusted Ed25519 key (`init --trust`): the
    /// implicit root (threshold 1) until the channel publishes `root/1.json`.
    package var trustedKeys: [String]
    /// True when `init --trust-root` pinned a signed root: trust comes from `trust/<N>.json`.
    package var pinnedRoot: Bool?
    /// The channel the device's owner (or its page) chose to follow instead of ``channel``
    /// (`clientctl channel set`, docs/targeting.md#choosing-a-channel); nil: ``channel``.
    /// Followed only while the trust root in force lets the device choose it.
    package var chosenChannel: String?
    /// Where the manifests of other channels live, by channel name, when not in the sibling
    /// folder of ``manifestURL`` (`../<channel>/manifest.json`): `channel set --manifest-url`.
    package var channelURLs: [String: String]?
    /// Site mirrors (`init --mirror`): each the mirror's address of
    /// ``manifestURL``'s `manifest.json`, tried in order before the origin for archives,
    /// patches, cohort files and the index, and for the manifest, trust roots and
    /// restriction only when the origin cannot be reached (docs/site-mirror.md#devices).
    /// `http:` to any host is allowed: every byte a mirror serves is verified as if it came
    /// from the origin (docs/threat-model.md#site-mirrors). nil: none.
    package var mirrors: [String]?
    /// How long a mirror may stay silent before it is skipped for the rest of the check;
    /// nil: ``MirrorTransport/defaultIdleTimeout``.
    package var mirrorIdleTimeoutSeconds: Double?

    /// The values ``mirrorIdleTimeoutSeconds`` may take.
    package static let mirrorIdleTimeoutRange: ClosedRange<Double> = 0.1...300

    package init(
        channel: String, manifestURL: String, trustedKeys: [String], pinnedRoot: Bool? = nil, chosenChannel: String? = nil,
        channelURLs: [String: String]? = nil, mirrors: [String]? = nil
    ) {
        self.channel = channel
        self.manifestURL = manifestURL
        self.trustedKeys = trustedKeys
        self.pinnedRoot = pinnedRoot
        self.chosenChannel = chosenChannel
        self.channelURLs = channelURLs
        self.mirrors = mirrors
    }

    /// ``mirrorIdleTimeoutSeconds`` as a `Duration` (the file keeps seconds).
    package var mirrorIdleTimeout: Duration {
        mirrorIdleTimeoutSeconds.map { .seconds(clamping: $0) } ?? MirrorTransport.defaultIdleTimeout
    }

    /// The channel name rule, the trust rule and the URL rules of ``URLPolicy``, for the
    /// manifest URL and every channel's mapped one; the mirror rules of ``MirrorURLs``.
    package func problem(in config: DeviceConfig) -> String? {
        if let problem = ReleaseIdentifier.channel.problem(channel) { return "channel: \(problem)" }
        if let chosenChannel, let problem = ReleaseIdentifier.channel.problem(chosenChannel) { return "chosenChannel: \(problem)" }
        if trustedKeys.isEmpty, pinnedRoot != true {
            return "trustedKeys is empty: a signed-archive root must trust at least one key (or pin a root)"
        }
        guard let url = URL(string: manifestURL), url.scheme != nil else { return "manifestURL is missing or not an absolute URL" }
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: url.isFileURL, allowInsecureHTTP: config.allowInsecureHTTP) {
            return "manifestURL: \(why)"
        }
        for (name, mapped) in (channelURLs ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let problem = ReleaseIdentifier.channel.problem(name) { return "channelURLs: '\(name)': \(problem)" }
            if let problem = ChannelChoice.manifestURLProblem(mapped, allowInsecureHTTP: config.allowInsecureHTTP) {
                return "channelURLs: '\(name)': \(problem)"
            }
        }
        return MirrorURLs.problem(mirrors ?? [], manifestURL: url)
            ?? mirrorIdleTimeoutSeconds.flatMap { seconds in
                seconds.isFinite && Self.mirrorIdleTimeoutRange.contains(seconds)
                    ? nil : "mirrorIdleTimeoutSeconds: \(seconds) is out of range (0.1 to 300 seconds)"
            }
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
    /// The SHA-256 (hex) of the kept restriction's bytes that ``restrictionETag`` came with.
    /// The bytes are kept while the check reads the feed, this state is saved later: a
    /// check killed in between leaves other bytes beside the ETag, and a `304` to it would
    /// judge with them. A copy whose digest is not this one is asked for whole (as is any
    /// copy kept before this field was, once).
    package var restrictionSHA256: String?
    /// The apply policy of the rollout role's restriction in force at the last check
    /// (docs/apply-policies.md): for `version`, until `expires`.
    package var restrictedApply: RestrictedApply?
    /// The channel this memory is of, once the device followed another channel than its
    /// root's (docs/targeting.md#choosing-a-channel); nil: the root's own, and the device
    /// never moved. Set, it also caps what the seed rule selects at ``highestAccepted``.
    package var channel: String?
    /// The floor and replay memory of the channels the device followed before, by name:
    /// each channel keeps its own, so coming back to one never goes below what it accepted
    /// there, nor takes an older manifest of it. nil when there are none.
    package var parked: [String: ParkedChannel]?
    /// The versions installed from offline media (`install --from`), with the `exported`
    /// time of the media's index: what `status` says the running version came from. nil
    /// when none (docs/offline-media.md#mixed-sites).
    package var fromMedia: [String: String]?
    /// The download deferral already reported, `VERSION REASON` (`1.4.0 window`): a
    /// `download-deferred` report goes once per episode, not once per check
    /// (docs/download-policy.md#reports); nil once the release downloads.
    package var downloadDeferred: String?
    /// The blacklisted versions a signed revocation put there (a manifest's `revoked`, the
    /// rollout role's restriction), of whichever channel: a revoked release met again on
    /// another channel is refused as revoked, not as one that failed start-up. nil when none.
    package var revoked: [String]?

    /// What a device keeps of a channel it no longer follows (``ArchiveMemory/parked``).
    package struct ParkedChannel: Codable, Sendable, Equatable {
        /// The channel's floor: the highest release accepted from it.
        package var highestAccepted: String?
        /// The `published` time of the newest manifest of it accepted.
        package var newestPublished: String?

        package init(highestAccepted: String? = nil, newestPublished: String? = nil) {
            self.highestAccepted = highestAccepted
            self.newestPublished = newestPublished
        }
    }

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
