import AuthenticatedTime
import AuthenticatedTimeClient
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import Logging
import MeteorHotCodePush
import SignedArchive

/// A device root opened for use: its layout, config, the channel its config names and the
/// `Updater` that sequences them. The one entry point of every host: `clientctl`'s device
/// commands, `clientctl serve` and the native shell all open a root with ``open(root:options:)``.
///
/// ```swift
/// let engine = try DeviceEngine.open(root: "/var/lib/notes")
/// try await engine.updater.start(bridge: myWebView)
/// for await event in engine.updater.events() { … }
/// ```
public struct DeviceEngine: Sendable {
    /// What a host may inject; every field has the production default.
    public struct Options: Sendable {
        /// The transport for feeds, manifests and archives (seed 004's host-owned
        /// transport); `nil`: `DefaultTransport` with the root's `proxy` and `caFile`.
        public var transport: (any Transport)?
        /// The wall clock (for expiries and trial records).
        public var now: @Sendable () -> Date
        /// The monotonic clock every timer of the device's path reads and sleeps on
        /// (docs/concurrency.md#the-clock-seam): the agent's checks, the watchdog, the apply
        /// driver, page problems, download holds and windows, the download rate cap and
        /// retries, report delivery and the channels' measures. A simulation or a test
        /// gives a manual one; the real one by default.
        package var clock: MonotonicClock = .continuous
        /// The downloader's retries; nil: `RetryPolicy.standard`.
        package var retry: RetryPolicy?
        /// What the downloader's and the Meteor channel's retries wait on; nil: a
        /// `TaskSleeper` on ``clock``. A simulation gives one that moves its clock itself.
        package var sleeper: (any Sleeper)?
        /// No byte for this long ends a download's request; nil: the downloader's 30 s.
        package var idleTimeout: Duration?
        /// Whether the link is metered (docs/download-policy.md#metered-links); nil: the
        /// root's probe (``DeviceEngine/linkProbe(_:)``).
        package var linkProbe: (any MeteredLinkProbe)?
        /// The report sender's jitter source, a number in 0..<1; nil: `Double.random`. A
        /// simulation draws it from its seed.
        package var reportRandom: (@Sendable () -> Double)?
        /// Reads the wall and boot clocks at one moment for the device's time
        /// (docs/device-time.md); nil: `ClockReading.now()` with ``now`` as its wall clock. A
        /// simulation gives its own boot clock too.
        package var clockReading: (@Sendable () -> ClockReading)?
        /// Overrides the config's startup timeout, e.g. `serve --startup-timeout` (the root's
        /// `config.json` is not changed).
        public var startupTimeout: Duration?
        /// The archive channel's own options, given to it at `init`.
        package var archive: ArchiveChannel.Options
        /// Archive roots: take the newest release whatever its staged rollout says.
        public var ignoreRollout: Bool {
            get { archive.ignoreRollout }
            set { archive.ignoreRollout = newValue }
        }
        /// Archive roots: false to always download the full archive.
        public var useDelta: Bool {
            get { archive.useDelta }
            set { archive.useDelta = newValue }
        }
        /// Archive roots: check the offline media in this folder instead of the feed
        /// (`install --from`, docs/offline-media.md): no time server is asked and nothing
        /// is sent to any network. nil: the feed.
        package var media: String? {
            get { archive.media }
            set { archive.media = newValue }
        }
        /// Where the updater and the channel log (swift-log); by default the label
        /// `clientctl.engine` on whatever handler the host bootstrapped. The engine logs
        /// below `warning`: failures reach the host as errors and events.
        public var logger: Logger

        public init(
            transport: (any Transport)? = nil, now: @escaping @Sendable () -> Date = { Date() },
            startupTimeout: Duration? = nil, ignoreRollout: Bool = false, useDelta: Bool = true,
            logger: Logger = Logger(label: "clientctl.engine")
        ) {
            self.transport = transport
            self.now = now
            self.startupTimeout = startupTimeout
            self.archive = ArchiveChannel.Options(ignoreRollout: ignoreRollout, useDelta: useDelta)
            self.logger = logger
        }
    }

    public let layout: RootLayout
    public let config: DeviceConfig
    package let channel: any UpdateChannel
    public let updater: Updater
    /// The transport the engine chose: the host's (``Options/transport``), else
    /// `DefaultTransport` with the root's `proxy` and `caFile`. The channel fetches through
    /// it and fleet reports are sent through it: one transport per root.
    public let transport: any Transport
    /// The time the engine decides by: the device's clock (``clock``) on the wall clock it
    /// was opened with (``Options/now``).
    package let now: @Sendable () -> Date
    /// The device's time: the wall clock, the floor in `time.json` and the time servers of the
    /// root's settings (docs/device-time.md).
    public let clock: DeviceClock
    /// The monotonic clock of the device's timers (``Options/clock``), which the engine hands
    /// to its parts and the agent to its own (docs/concurrency.md#the-clock-seam).
    package let monotonic: MonotonicClock
    /// Who holds the device's downloads back now (docs/download-policy.md#holds): the leases
    /// of the page and of local processes, which the agent takes and the channel reads.
    package let downloadHolds: DownloadHolds
    /// The report sender's jitter source (``Options/reportRandom``).
    package var reportRandom: (@Sendable () -> Double)? = nil

    /// The device root a host was given: `explicit` (a `--root` flag) when set, else the
    /// `CLIENTCTL_ROOT` environment variable.
    /// - Throws: ``EngineError`` `.invalidArgument` when neither names one.
    public static func rootPath(_ explicit: String?) throws -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let env = ProcessInfo.processInfo.environment["CLIENTCTL_ROOT"], !env.isEmpty { return env }
        throw EngineError(.invalidArgument, "no device root: pass --root DIR or set CLIENTCTL_ROOT")
    }

    /// Opens the root at `root`: it must exist and hold a valid `config.json` (made by
    /// `clientctl init`); the channel is chosen from the config's `channelKind`.
    /// - Throws: ``EngineError`` `.configInvalid` for a missing root or an unknown channel
    ///   kind; `UpdaterError` `.configInvalid` for an invalid config; the channel's own
    ///   error when it cannot open the root.
    public static func open(root: String, options: Options = Options()) throws -> DeviceEngine {
        try open(RootLayout(root: root), options: options)
    }

    /// Opens the root of `layout` (see ``open(root:options:)``).
    public static func open(_ layout: RootLayout, options: Options = Options()) throws -> DeviceEngine {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDir), isDir.boolValue else {
            throw EngineError(.configInvalid, "device root \(layout.root) does not exist: run `clientctl init --root \(layout.root) …` first")
        }
        var config = try DeviceConfig.load(layout)
        if let timeout = options.startupTimeout { config.startupTimeoutSeconds = timeout.inSeconds }
        let transport = options.transport ?? DefaultTransport(config: config, root: layout.root)
        let wall = options.now
        let clock = DeviceClock(
            layout: layout,
            clocks: options.clockReading ?? {
                var reading = ClockReading.now()
                reading.wall = wall()
                return reading
            },
            // A check from offline media asks no time server: it sends nothing anywhere.
            servers: options.media == nil ? config.deviceSettings.roughtimeServers : [], quorum: config.deviceSettings.effectiveTimeQuorum,
            query: RoughtimeQuorum.query, logger: options.logger)
        let holds = DownloadHolds(now: { clock.now() }, clock: options.clock)
        let channel = try makeChannel(config: config, layout: layout, transport: transport, options: options, clock: clock, holds: holds)
        return DeviceEngine(
            layout: layout, config: config, channel: channel,
            updater: Updater(layout: layout, config: config, channel: channel, clock: clock, logger: options.logger),
            transport: transport, now: { clock.now() }, clock: clock, monotonic: options.clock, downloadHolds: holds,
            reportRandom: options.reportRandom)
    }

    /// Meteor roots: the shell's `www` folder (the parent of the embedded `application`),
    /// whose other files are served beside the client; nil for archive roots.
    public var wwwDirectory: String? {
        guard config.channelKind == .meteor, let embedded = config.embeddedPath else { return nil }
        let url = URL(fileURLWithPath: embedded).standardizedFileURL
        return url.lastPathComponent == "application" ? url.deletingLastPathComponent().path : nil
    }

    /// The probe that tells the download policy whether the link is metered
    /// (docs/download-policy.md#metered-links): the one place a root's probe is chosen.
    static func linkProbe(_ config: DeviceConfig) -> any MeteredLinkProbe {
        MeteredLinkProbes.device(meteredInterfaces: config.deviceSettings.meteredInterfaces)
    }

    /// The channel a root's config names, given the transport the engine chose (the host's,
    /// else ``DefaultTransport`` with the root's `proxy` and `caFile`) and its own options:
    /// the engine is the one place where a root's parts are chosen.
    static func makeChannel(
        config: DeviceConfig, layout: RootLayout, transport: any Transport, options: Options, clock: DeviceClock,
        holds: any DownloadHolding = NoDownloadHolds()
    ) throws -> any UpdateChannel {
        // The device's download rate cap, one for the channel: its archive, patch and asset
        // downloads and their resumes share it; manifests and the other small files never
        // carry it (docs/download-policy.md). It follows `config.json` as it is at each
        // download (`clientctl download set` under a running `serve`), else the config opened.
        let opened = config.downloadRate
        let limiter = RateLimiter(clock: options.clock) { [layout] in
            let now = (try? DeviceConfig.load(layout)).map(\.downloadRate) ?? opened
            return now.flatMap { ByteRate(parsing: $0) }
        }
        switch config.channelKind {
        case .signedArchive:
            var downloader = Downloader(
                transport: transport, retry: options.retry ?? .standard, sleeper: options.sleeper ?? TaskSleeper(clock: options.clock))
            if let idle = options.idleTimeout { downloader.idleTimeout = idle }
            downloader.rateLimiter = limiter
            downloader.now = options.now
            var channel = try ArchiveChannel(
                layout: layout, config: config, downloader: downloader,
                options: options.archive, clock: clock, logger: options.logger)
            // The download policy's link and holds (docs/download-policy.md).
            channel.downloadGate = DownloadGate(probe: options.linkProbe ?? linkProbe(config), holds: holds, clock: options.clock)
            return channel
        case .meteor:
            var meteor = MeteorChannel.Options(
                sleeper: options.sleeper ?? TaskSleeper(clock: options.clock), logger: options.logger, rateLimiter: limiter, clock: options.clock)
            meteor.now = options.now
            return try MeteorChannel(layout: layout, config: config, transport: transport, options: meteor)
        default:
            throw EngineError(.configInvalid, "\(layout.config): channelKind '\(config.channelKind.rawValue)' is not signed-archive or meteor")
        }
    }
}
