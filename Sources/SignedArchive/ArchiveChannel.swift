import ApplyPolicy
import ClientFoundation
import ClientUpdater
import DeviceSetup
import FleetReports
import Foundation
import Logging
import SafeArchive
import SignedManifest

/// Channel 1: signed archives from a release folder written by `clientctl publish`.
///
/// `check` fetches and verifies the manifest, applies the device policy, downloads and
/// unpacks the archive into `clients/vX.Y.Z` (through ``ArchiveInstaller``); selection is
/// the seed rule (highest compatible, not blacklisted).
package struct ArchiveChannel: UpdateChannel {
    /// The archive channel's own choices (the engine takes them from `DeviceEngine.Options`).
    package struct Options: Sendable, Equatable {
        /// `install --ignore-rollout`: take the newest release whatever its staged rollout says.
        package var ignoreRollout: Bool
        /// `install --no-delta`: false to download the full archive even when a patch applies.
        package var useDelta: Bool
        /// `install --from DIR`: check the releases on offline media in DIR instead of the
        /// feed (docs/offline-media.md); nil: the feed.
        package var media: String?

        package init(ignoreRollout: Bool = false, useDelta: Bool = true, media: String? = nil) {
            self.ignoreRollout = ignoreRollout
            self.useDelta = useDelta
            self.media = media
        }
    }

    package let layout: RootLayout
    package let config: DeviceConfig
    /// The channel's section of `config.json`. During a check (``ArchiveInstaller``) its
    /// `channel` and `manifestURL` are those of the channel the device follows then
    /// (``ChannelChoice/following(_:root:)``); ``trust`` keeps the root's own.
    package internal(set) var settings: ArchiveSettings
    package let store: ArchiveStore
    /// The feed's downloader; a check from media reads through the media's (``MediaTransport``).
    var downloader: Downloader
    /// During a check from offline media: its verified index and where it is.
    var media: MediaSource?
    /// The trust roots the device accepted (or its `--trust` keys).
    package let trust: TrustStore
    let now: @Sendable () -> Date
    /// The device's time, when the engine keeps one: `now` is its `now()`, and every signed
    /// time the channel verifies raises its floor (docs/device-time.md#the-floor).
    package let clock: DeviceClock?
    /// Where the channel logs its steps (download, delta or full archive, promotion).
    package let logger: Logger
    /// Rollout and delta choices, fixed at `init`.
    package let options: Options
    /// What the download policy reads beyond the settings: the link and the holds
    /// (docs/download-policy.md); the engine sets them, a channel on its own has neither.
    package var downloadGate = DownloadGate()
    /// How many objects of a release's file list the per-file path downloads at a time: four.
    /// The device simulator's checks' world sets one, so the order in which objects meet the
    /// mirror, the origin and their faults is the seed's, not the scheduler's
    /// (docs/simulation.md#determinism).
    package var objectDownloads = 4

    /// - Throws: ``SignedArchiveError`` `.configInvalid` for a root of another kind or a
    ///   trusted key that cannot be read; `UpdaterError` `.configInvalid` when the
    ///   channel's settings break a rule.
    /// - Parameters:
    ///   - downloader: the transport and retry policy used for manifests and archives,
    ///     chosen by the engine (the composition root).
    ///   - options: rollout and delta choices.
    ///   - now: the wall clock, for `expires`; ignored when `clock` is given.
    ///   - clock: the device's time, which decides and which verified times raise.
    ///   - logger: where the channel logs its steps.
    package init(
        layout: RootLayout, config: DeviceConfig, downloader: Downloader, options: Options = Options(),
        now: @escaping @Sendable () -> Date = { Date() }, clock: DeviceClock? = nil, logger: Logger = Logger(label: "clientctl.engine")
    ) throws {
        guard config.channelKind == .signedArchive else {
            throw SignedArchiveError(.configInvalid, "\(layout.config) is not a signed-archive root")
        }
        self.layout = layout
        self.config = config
        self.settings = try config.settings(ArchiveSettings.self, layout: layout)
        self.downloader = downloader
        self.options = options
        self.now = clock.map { clock in { @Sendable in clock.now() } } ?? now
        self.clock = clock
        self.logger = logger
        self.trust = TrustStore(layout: layout, settings: settings, app: config.app)
        do {
            _ = try trust.current()
        } catch let error as SignedArchiveError {
            throw error
        } catch {
            throw SignedArchiveError(.configInvalid, "\(layout.config): a trusted key cannot be read: \(error)")
        }
        self.store = ArchiveStore(layout: layout, trust: trust)
    }

    package func installedVersions() throws -> [InstalledVersion] {
        try store.installedVersions()
    }

    /// The embedded seed; its id names the shell that carries it (`embedded-<shell>`),
    /// so a shell update is seen as a new seed.
    package func embeddedVersion() throws -> InstalledVersion? {
        guard let path = config.embeddedPath else { return nil }
        return InstalledVersion(id: "embedded-\(config.shellVersion)", directory: path, isEmbedded: true)
    }

    /// Checks the channel the device follows now: the one chosen in `config.json` (read at
    /// every check: `clientctl channel set` and the page's `setChannel` change it while an
    /// agent runs) when the trust root lets the device follow it, else the root's own. A
    /// move parks the memory of the channel left and takes up the one of the channel
    /// followed (``ChannelChoice/follow(_:home:memory:)``).
    package func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let following = try ChannelChoice.following(currentSettings(), root: try trust.current())
        if let note = following.note { reporter.note(note) }
        let left = state.archive.channel ?? settings.channel
        if ChannelChoice.follow(following.channel, home: settings.channel, memory: &state.archive) {
            reporter.note("this device follows channel '\(following.channel)' now (it followed '\(left)')")
            logger.info("following channel \(following.channel) (was \(left)): \(following.manifestURL)")
        }
        var followed = self
        followed.settings.channel = following.channel
        followed.settings.manifestURL = following.manifestURL
        if let media = options.media {
            return try restaged(try await followed.checkMedia(media, state: &state, reporter: reporter), state: state)
        }
        let direct = followed.downloader
        followed.downloader = throughMirrors(direct, reporter: reporter)
        let before = state
        let outcome: CheckOutcome
        do {
            outcome = try await ArchiveInstaller(channel: followed, reporter: reporter).run(state: &state)
        } catch let refused as SignedArchiveError where refused.code == .originUnreachable {
            // The origin failed once and a mirror's manifest, older than what this device
            // accepted, stood in for it. Without the mirror the downloader's retries would
            // have asked the origin again, so they do now: a mirror changes only the speed
            // of a check, never its outcome (docs/site-mirror.md#devices). When the origin
            // is still out of reach, the check fails saying why, as before.
            // The first pass may have kept what the mirror served beside the state (the
            // restriction, a deferral's manifest): without the ETags the origin sends its
            // documents whole, and they replace those copies.
            state = before
            state.archive.manifestETag = nil
            state.archive.restrictionETag = nil
            state.archive.restrictionSHA256 = nil
            reporter.note("the site mirror's manifest cannot stand in; the origin is asked again")
            var origin = followed
            origin.downloader = direct
            do {
                outcome = try await ArchiveInstaller(channel: origin, reporter: reporter).run(state: &state)
            } catch let failing as any TransportFailing where failing.isTransient {
                state = before
                throw refused
            }
        }
        if case .installed(let version) = outcome, state.archive.fromMedia?[version.id] != nil {
            state.archive.fromMedia?[version.id] = nil  // installed from the feed this time
            if state.archive.fromMedia?.isEmpty == true { state.archive.fromMedia = nil }
        }
        return try restaged(outcome, state: state)
    }

    /// On a device that moved between channels, a check that finds the followed channel's
    /// release already installed while another channel's is staged (or runs) hands it back
    /// as installed, so the caller stages it: back on stable, stable's 1.4.0 replaces beta's
    /// staged 1.5.0-rc.1 (the seed rule alone would not restage over a pending version).
    private func restaged(_ outcome: CheckOutcome, state: DeviceState) throws -> CheckOutcome {
        guard case .upToDate = outcome, state.archive.channel != nil,
            let selected = select(from: try installedVersions(), state: state), !selected.isEmbedded,
            selected.id != (state.pending ?? state.current)
        else { return outcome }
        return .installed(selected)
    }

    /// The channel settings `config.json` holds now for the channel chosen (and the URLs
    /// given for channels), over those the channel was opened with; those alone when the
    /// file no longer reads.
    private func currentSettings() -> ArchiveSettings {
        var current = settings
        if let fresh = try? DeviceConfig.load(layout).settings(ArchiveSettings.self, layout: layout) {
            current.chosenChannel = fresh.chosenChannel
            current.channelURLs = fresh.channelURLs
            current.mirrors = fresh.mirrors
            current.mirrorIdleTimeoutSeconds = fresh.mirrorIdleTimeoutSeconds
        }
        return current
    }

    /// `downloader` through the site mirrors `config.json` names now, for one check
    /// (docs/site-mirror.md#devices): a fresh ``MirrorTransport`` each check, so a mirror
    /// skipped in one is asked again in the next. The mirrors mirror the root's own
    /// manifest URL; the manifest, trust roots and restriction come from the origin
    /// while it answers.
    func throughMirrors(_ downloader: Downloader, reporter: CheckReporter) -> Downloader {
        let current = currentSettings()
        let mirrors = (current.mirrors ?? []).compactMap(URL.init(string:))
        guard !mirrors.isEmpty, let origin = URL(string: trust.settings.manifestURL) else { return downloader }
        var through = downloader
        let logger = logger
        through.transport = MirrorTransport(
            inner: downloader.transport, origin: origin, mirrors: mirrors, idleTimeout: current.mirrorIdleTimeout,
            prefersOrigin: Self.prefersOrigin,
            note: { line in
                logger.info("\(line)")
                reporter.note(line)
            }, clock: downloadGate.clock)
        return through
    }

    /// The files whose freshness matters: the manifest, the trust roots (`root/N.json`)
    /// and the rollout role's restriction. A mirror serves them only when the origin
    /// cannot be reached.
    package static func prefersOrigin(_ url: URL) -> Bool {
        let name = url.lastPathComponent
        return name == "manifest.json" || name == "restriction.json"
            || (url.deletingLastPathComponent().lastPathComponent == "root" && name.hasSuffix(".json"))
    }

    /// The manifest URL of the trust root's own channel, beside which the roots are walked
    /// (`root/<N+1>.json`) whichever channel the device follows.
    package var rootsURL: URL? { media.map { URL(fileURLWithPath: $0.staging + "/manifest.json") } ?? URL(string: trust.settings.manifestURL) }

    /// Refuses a manifest of a chosen channel when `root` (the root in force after the walk)
    /// no longer lets the device follow that channel: nothing of it is taken, and the next
    /// check follows the root's own channel again.
    /// - Throws: ``SignedArchiveError`` `.channelNotAllowed`.
    package func requireFollowable(by root: TrustRoot) throws {
        guard !root.allowsChannel(settings.channel) else { return }
        throw SignedArchiveError(
            .channelNotAllowed,
            "\(ChannelChoice.rootName(root)) does not let this device follow channel '\(settings.channel)': nothing of it is taken; "
                + "the next check follows '\(root.channel)'")
    }

    /// The seed rule over the versions of the channel the device follows
    /// (``ChannelChoice/selectable(_:memory:)``): the highest compatible, not blacklisted.
    package func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? {
        Selection.highestCompatible(
            ChannelChoice.selectable(installed, memory: state.archive), shell: config.shellVersion, blacklist: state.blacklist)
    }

    /// After a shell update the monotonic floor stays (an older release is still older),
    /// with the channel followed and the floors of the channels followed before; the
    /// manifest ETag goes, so the next check reads the manifest again.
    package func shellUpdated(state: inout DeviceState) throws {
        let kept = state.archive
        state.archive = ArchiveMemory(highestAccepted: kept.highestAccepted)
        state.archive.channel = kept.channel
        state.archive.fromMedia = kept.fromMedia
        state.archive.parked = kept.parked.map { $0.mapValues { ArchiveMemory.ParkedChannel(highestAccepted: $0.highestAccepted) } }
    }

    /// The floor of a rebuilt state: the highest version installed. A device that follows
    /// or followed another channel than its root's gets a floor per channel, from the
    /// channel each installed version's verified manifest names.
    package func recover(state: inout DeviceState, installed: [InstalledVersion]) {
        let versions = installed.compactMap { Version($0.id) }
        state.archive.highestAccepted = versions.max()?.description
        var floors: [String: Version] = [:]
        for version in versions {
            guard let channel = store.verifiedSidecar(version)?.channel else { continue }
            if floors[channel].map({ $0 < version }) ?? true { floors[channel] = version }
        }
        let following = (try? ChannelChoice.following(currentSettings(), root: try trust.current()))?.channel ?? settings.channel
        guard following != settings.channel || floors.keys.contains(where: { $0 != settings.channel }) else { return }
        var memory = ArchiveMemory(highestAccepted: floors[following]?.description)
        memory.channel = following
        let parked = floors.filter { $0.key != following }.mapValues { ArchiveMemory.ParkedChannel(highestAccepted: $0.description) }
        memory.parked = parked.isEmpty ? nil : parked
        state.archive = memory
    }

    /// The `apply` of the version's verified sidecar manifest, made more patient by the
    /// rollout role's restriction in force for it at the last check (a restriction that
    /// would hurry devices was refused when it was read).
    package func applyPolicy(for version: String) -> ApplyPolicy? {
        guard let release = Version(version).flatMap({ store.verifiedSidecar($0) }) else { return nil }
        let own = release.apply
        guard let kept = StateStore.load(layout).archive.restrictedApply, kept.version == version, kept.expires > now() else { return own }
        return (try? (own ?? .nextStart).restricted(by: kept.policy)) ?? own
    }

    /// The channel the device follows by `config` and its root (and, when it is not the
    /// root's own, that one and the channels the device may choose), the floor of the
    /// channel it followed at its last check, the root's version.
    package func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary {
        let root = try? trust.current()
        var summary = ChannelSummary(channel: settings.channel, highestAccepted: state.archive.highestAccepted, trustRoot: root?.version)
        if let current = state.current, Version(current) != nil {
            summary.currentSource = state.archive.fromMedia?[current].map { "offline media exported \($0)" } ?? "the feed"
        }
        guard let root else { return summary }
        summary.choosableChannels = root.channels
        var chosen = settings
        if let fresh = try? config.settings(ArchiveSettings.self, layout: layout) {
            chosen.chosenChannel = fresh.chosenChannel
            chosen.channelURLs = fresh.channelURLs
        }
        guard let following = try? ChannelChoice.following(chosen, root: root) else { return summary }
        summary.channel = following.channel
        if following.channel != settings.channel { summary.rootChannel = settings.channel }
        let last = state.archive.channel ?? settings.channel
        let moving = "this device follows channel '\(following.channel)' from its next check (its last check followed '\(last)')"
        summary.choiceNote = following.note ?? (last != following.channel ? moving : nil)
        return summary
    }

    /// A verification failure is a refusal of the release: its signature, an expired
    /// trust root, a malformed or refused manifest; an archive over the device's cap or
    /// that cannot be unpacked is the download's.
    package func reportReason(for error: any Error) -> ReportReason? {
        if let error = error as? SignedManifestError {
            switch error.code {
            case .invalidSignature, .untrustedKey, .thresholdNotMet, .untrustedRoot, .invalidKey: return .signature
            case .rootExpired: return .expired
            case .malformedJSON, .invalidManifest, .restrictionRefused: return .badRelease
            default: return nil
            }
        }
        if let error = error as? SignedArchiveError {
            if error.code == .archiveLimit { return .tooLarge }
            if error.code == .archiveRejected { return .badRelease }
            return nil
        }
        if error is SafeArchiveError { return .badArchive }
        return nil
    }

    package func remove(_ version: InstalledVersion) throws {
        guard !version.isEmbedded else { return }
        try store.remove(version)
    }

    /// Every regular file of the version's tree, served at its relative path; `index.html`
    /// at the root is also `/`. A name ``ServedPathRule`` refuses throws `.invalidArgument`. Archives carry no per-file hashes, so names with a
    /// content hash in them are what makes an asset cacheable.
    /// - Throws: ``SignedArchiveError`` `.notFound` or `.invalidArgument` with an
    ///   `UnservableVersion` cause: the `UpdateChannel` contract's seam, on which the
    ///   updater's watchdog fails the version and tries the next.
    package func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] {
        let root = version.directory
        guard let enumerator = FileManager.default.enumerator(atPath: root) else {
            throw SignedArchiveError(.notFound, "version \(version.id): \(root) cannot be read", underlying: UnservableVersion(id: version.id))
        }
        var assets: [ServedAsset] = []
        while let relative = enumerator.nextObject() as? String {
            let full = root + "/" + relative
            var st = stat()
            guard lstat(full, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            if let problem = ServedPathRule.problem(withStoredPath: relative) {
                // Installed by an older clientctl: the organizer fails the version instead.
                throw SignedArchiveError(
                    .invalidArgument, "cannot organize version \(version.id): \(relative): \(problem)", underlying: UnservableVersion(id: version.id))
            }
            let urlPath = relative == "index.html" ? "/" : "/" + relative
            assets.append(ServedAsset(urlPath: urlPath, sourceFile: full, cacheable: HashedName.looksHashed(relative)))
        }
        return assets.sorted { $0.urlPath < $1.urlPath }
    }
}
