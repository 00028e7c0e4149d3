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

        package init(ignoreRollout: Bool = false, useDelta: Bool = true) {
            self.ignoreRollout = ignoreRollout
            self.useDelta = useDelta
        }
    }

    package let layout: RootLayout
    package let config: DeviceConfig
    /// The channel's section of `config.json`.
    package let settings: ArchiveSettings
    package let store: ArchiveStore
    let downloader: Downloader
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

    package func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let installer = ArchiveInstaller(channel: self, reporter: reporter)
        return try await installer.run(state: &state)
    }

    package func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? {
        Selection.highestCompatible(installed, shell: config.shellVersion, blacklist: state.blacklist)
    }

    /// After a shell update the monotonic floor stays (an older release is still older);
    /// the manifest ETag goes, so the next check reads the manifest again.
    package func shellUpdated(state: inout DeviceState) throws {
        state.archive = ArchiveMemory(highestAccepted: state.archive.highestAccepted)
    }

    /// The floor of a rebuilt state: the highest version installed.
    package func recover(state: inout DeviceState, installed: [InstalledVersion]) {
        state.archive.highestAccepted = installed.compactMap { Version($0.id) }.max()?.description
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

    package func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary {
        ChannelSummary(
            channel: settings.channel, highestAccepted: state.archive.highestAccepted, trustRoot: try? trust.current().version)
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
    /// - Throws: `UpdaterError` `.notFound` or `.invalidArgument`: the `Channel` contract's
    ///   error, on which the updater's watchdog fails the version and tries the next.
    package func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] {
        let root = version.directory
        guard let enumerator = FileManager.default.enumerator(atPath: root) else {
            throw UpdaterError(.notFound, "version \(version.id): \(root) cannot be read")
        }
        var assets: [ServedAsset] = []
        while let relative = enumerator.nextObject() as? String {
            let full = root + "/" + relative
            var st = stat()
            guard lstat(full, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            if let problem = ServedPathRule.problem(withStoredPath: relative) {
                // Installed by an older clientctl: the organizer fails the version instead.
                throw UpdaterError(.invalidArgument, "cannot organize version \(version.id): \(relative): \(problem)")
            }
            let urlPath = relative == "index.html" ? "/" : "/" + relative
            assets.append(ServedAsset(urlPath: urlPath, sourceFile: full, cacheable: HashedName.looksHashed(relative)))
        }
        return assets.sorted { $0.urlPath < $1.urlPath }
    }
}
