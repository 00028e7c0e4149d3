import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import Logging

/// The Meteor hot-code-push channel (docs/meteor.md): fetches
/// `<ROOT_URL>/__cordova/manifest.json`, downloads only the assets it does not already
/// have, verifies them and stores the version under `<root>/meteor/<version>/`.
///
/// Selection, switching, watchdog and retention are the shared pipeline's; this type
/// only fetches, verifies, stores and describes versions. Every method expects the
/// root's lock to be held by the caller.
package struct MeteorChannel: UpdateChannel {
    /// Tunables; the defaults suit devices.
    package struct Options: Sendable {
        /// Parallel asset downloads (the plugin's 6 connections per host).
        package var maxConnections: Int
        /// Retries of transient failures (the shared core policy: capped exponential backoff).
        package var retry: RetryPolicy
        /// How retries wait (injected so tests never sleep).
        package var sleeper: any Sleeper
        /// Size and entry caps for manifests.
        package var manifestLimits: AssetManifest.Limits
        /// Cap for one asset whose manifest entry gives no size (index.html, source maps).
        package var maxAssetBytes: Int64
        /// Where the channel logs its steps (assets reused and fetched, versions stored).
        package var logger: Logger
        /// The device's download rate cap, kept on asset downloads (never on the manifest);
        /// `nil`: no cap.
        package var rateLimiter: RateLimiter?
        /// The monotonic clock a download's duration is measured on (the engine's: a
        /// simulation's reports say its time, not the host's).
        package var clock: MonotonicClock
        /// The device's wall clock, against which a server's `Retry-After` date is read (the
        /// engine's).
        package var now: @Sendable () -> Date = { Date() }

        package init(
            maxConnections: Int = 6, retry: RetryPolicy = .standard, sleeper: any Sleeper = TaskSleeper(),
            manifestLimits: AssetManifest.Limits = AssetManifest.Limits(), maxAssetBytes: Int64 = 256 << 20,
            logger: Logger = Logger(label: "clientctl.engine"), rateLimiter: RateLimiter? = nil,
            clock: MonotonicClock = .continuous
        ) {
            self.maxConnections = max(1, maxConnections)
            self.retry = retry
            self.sleeper = sleeper
            self.manifestLimits = manifestLimits
            self.maxAssetBytes = maxAssetBytes
            self.logger = logger
            self.rateLimiter = rateLimiter
            self.clock = clock
        }
    }

    /// The device root.
    package let layout: RootLayout
    /// The server's ROOT_URL (where `/__cordova/` lives).
    package let rootURL: URL
    /// Which compatibility version is compared.
    package let platform: CompatPlatform
    /// The embedded (initial) bundle folder: `program.json`, `index.html`, assets by `path`.
    package let embeddedPath: String
    /// The network seam, chosen by the engine (the composition root).
    package let transport: any Transport
    package let options: Options

    /// The folder of a download in progress.
    package var downloadingDirectory: String { layout.meteor + "/Downloading" }
    /// The folder of an interrupted download, kept for reuse.
    package var partialDirectory: String { layout.meteor + "/PartialDownload" }

    package init(
        layout: RootLayout, rootURL: URL, platform: CompatPlatform, embeddedPath: String,
        transport: any Transport, options: Options = Options()
    ) {
        self.layout = layout
        self.rootURL = rootURL
        self.platform = platform
        self.embeddedPath = embeddedPath
        self.transport = transport
        self.options = options
    }

    /// A channel for a root whose `config.json` says `channelKind == .meteor`.
    /// - Throws: ``MeteorError`` `.configInvalid` for a root of another kind or without its
    ///   Meteor fields; `UpdaterError` `.configInvalid` when the channel's settings break a rule.
    package init(layout: RootLayout, config: DeviceConfig, transport: any Transport, options: Options = Options()) throws {
        guard config.channelKind == .meteor else { throw MeteorError(.configInvalid, "\(layout.config) is not a Meteor root") }
        let settings = try config.settings(MeteorSettings.self, layout: layout)
        guard let url = URL(string: settings.meteorRootURL), let platform = settings.platform, let embedded = config.embeddedPath else {
            throw MeteorError(.configInvalid, "\(layout.config) is not a Meteor root (needs meteorRootURL and embeddedPath)")
        }
        self.init(layout: layout, rootURL: url, platform: platform, embeddedPath: embedded, transport: transport, options: options)
    }

    /// `<ROOT_URL>/__cordova/` (a trailing slash is added to ROOT_URL when missing).
    package var baseURL: URL {
        let text = rootURL.absoluteString
        let root = text.hasSuffix("/") ? text : text + "/"
        return URL(string: root + "__cordova/") ?? rootURL
    }

    // MARK: Bundles

    /// The embedded bundle.
    /// - Throws: ``MeteorError`` `.embeddedInvalid` when its program.json is missing or invalid.
    package func embeddedBundle() throws -> AssetBundle {
        do {
            return try AssetBundle.load(directory: embeddedPath, platform: platform, parent: nil, limits: options.manifestLimits)
        } catch let error as MeteorError {
            throw MeteorError(.embeddedInvalid, "embedded bundle: \(error.message)", underlying: error)
        }
    }

    /// The downloaded bundle of `version`, if `meteor/<version>` holds a complete one.
    package func downloadedBundle(_ version: String, parent: AssetBundle) -> AssetBundle? {
        guard RootLayoutName.isUsableVersion(version), let dir = layout.meteorDirectory(version),
            let bundle = try? AssetBundle.load(directory: dir, platform: platform, parent: parent, limits: options.manifestLimits),
            bundle.version == version, FileManager.default.fileExists(atPath: dir + "/index.html")
        else { return nil }
        return bundle
    }

    /// The bundle a version id names: a downloaded one, or the embedded one.
    package func bundle(for version: InstalledVersion) throws -> AssetBundle {
        let embedded = try embeddedBundle()
        if version.isEmbedded || version.id == embedded.version && version.directory == embeddedPath { return embedded }
        guard let bundle = downloadedBundle(version.id, parent: embedded) else {
            throw MeteorError(.io, "version \(version.id) is not installed under \(layout.meteor)")
        }
        return bundle
    }

    /// The bundle in use: `state.current` when it is downloaded, else the embedded one.
    package func currentBundle(state: DeviceState) throws -> AssetBundle {
        let embedded = try embeddedBundle()
        if let current = state.current, current != embedded.version, let bundle = downloadedBundle(current, parent: embedded) {
            return bundle
        }
        return embedded
    }

    // MARK: UpdateChannel

    package func installedVersions() throws -> [InstalledVersion] {
        let embedded = try embeddedBundle()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.meteor)) ?? []
        return names.sorted().compactMap { name in
            guard let bundle = downloadedBundle(name, parent: embedded) else { return nil }
            return installedVersion(bundle)
        }
    }

    package func embeddedVersion() throws -> InstalledVersion? {
        let embedded = try embeddedBundle()
        return InstalledVersion(id: embedded.version, directory: embeddedPath, isEmbedded: true)
    }

    /// `lastDownloadedVersion` when its bundle is installed and not blacklisted; else `nil`
    /// (the embedded bundle).
    package func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? {
        guard let last = state.meteor?.lastDownloadedVersion, !state.blacklist.contains(last) else { return nil }
        if let found = installed.first(where: { $0.id == last && !$0.isEmbedded }) { return found }
        // The feed went back to the shell's own version: the plugin then runs the seed.
        if let seed = try? embeddedVersion(), seed.id == last { return seed }
        return nil
    }

    package func remove(_ version: InstalledVersion) throws {
        guard !version.isEmbedded, let dir = layout.meteorDirectory(version.id), RootLayoutName.isUsableVersion(version.id) else {
            throw MeteorError(.invalidArgument, "refusing to remove \(version.id): not a downloaded Meteor version")
        }
        try AtomicFile.removeTree(dir)
        try AtomicFile.syncDirectory(layout.meteor)
    }

    package func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] {
        try bundle(for: version).servedAssets()
    }

    func installedVersion(_ bundle: AssetBundle) -> InstalledVersion {
        let attributes = try? FileManager.default.attributesOfItem(atPath: bundle.directory)
        return InstalledVersion(
            id: bundle.version, directory: bundle.directory,
            installedAt: attributes?[.modificationDate] as? Date)
    }

    // MARK: State

    /// Sets `state.meteor` appId, rootURL and cordovaCompatibilityVersion from the bundle
    /// in use (the plugin takes them from its current bundle).
    package func refreshMemory(state: inout DeviceState) throws {
        let current = try currentBundle(state: state)
        let config = try? current.runtimeConfig()
        var memory = state.meteor ?? MeteorMemory()
        memory.appId = config?.appId ?? memory.appId
        memory.rootURL = config?.rootURL ?? memory.rootURL
        memory.cordovaCompatibilityVersion = current.manifest.cordovaCompatibilityVersion
        state.meteor = memory
    }

    /// The plugin takes appId, ROOT_URL and the compatibility version from the bundle it
    /// runs: they follow every switch, not only the next check.
    package func servingChanged(state: inout DeviceState) {
        try? refreshMemory(state: &state)
    }

    /// The note of a version that renamed the seed's build (docs/meteor.md#versions-that-disagree-for-no-reason),
    /// while that version is pending or current.
    package func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary {
        guard let memory = state.meteor, let note = memory.versionNote, let version = memory.noteVersion,
            version == state.pending || version == state.current
        else { return ChannelSummary() }
        return ChannelSummary(note: note)
    }

    /// After a shell update (the core's one rule, `lastSeenInitialVersion`) the plugin keeps
    /// appId and ROOT_URL (as on iOS) and forgets the rest; an interrupted download made
    /// for the old shell goes too, and the compatibility version is the new seed's.
    package func shellUpdated(state: inout DeviceState) throws {
        try AtomicFile.removeTree(layout.meteor)
        let kept = state.meteor
        state.meteor = MeteorMemory(appId: kept?.appId, rootURL: kept?.rootURL)
        try refreshMemory(state: &state)
    }
}
