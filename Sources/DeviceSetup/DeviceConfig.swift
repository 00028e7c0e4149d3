import ClientFoundation
import Foundation

/// `<root>/config.json`: what a device root is for and whom it trusts.
///
/// Written once by `clientctl init`; read by every other command.
public struct DeviceConfig: Codable, Sendable, Equatable, CarriesDeviceSettings {
    /// Which update channel feeds this root: the channel modules name theirs
    /// (`signed-archive`, `meteor`); the core only passes it on.
    public struct ChannelKind: RawRepresentable, Codable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    public static let currentFormat = "clientctl-config-v1"

    public var format: String
    /// Application id (`com.example.notes`); for Meteor, the appId of the embedded bundle.
    public var app: String
    public var channelKind: ChannelKind
    /// The channel's own settings (feed URL, trusted keys, …): every key of `config.json`
    /// that is not one of the core's, read and validated by the channel.
    package var channelSettings: ChannelSection
    /// The version of the native shell this root serves.
    public var shellVersion: Version
    /// Read-only client shipped inside the shell (never written).
    public var embeddedPath: String?
    /// Allow `http:` manifest and archive URLs to non-loopback hosts (off by default).
    public var allowInsecureHTTP: Bool
    /// Caps applied when unpacking an archive.
    public var limits: Limits
    /// Proxy for every request (`http://host:port`, like curl's `-x`); replaces the
    /// `*_proxy` environment variables, `NO_PROXY` still applies. `nil`: the environment.
    public var proxy: String?
    /// PEM file of the CA certificates to trust instead of the system store (a private
    /// CA); relative to the root when not absolute. `nil`: the system trust store.
    public var caFile: String?
    /// What `init`, a device template and `package` share: the startup timeout, retention,
    /// the report URL (stored under their own keys beside the others).
    public var deviceSettings: DeviceSettings

    /// Caps that protect a device from hostile or broken releases.
    public struct Limits: Codable, Sendable, Equatable {
        /// Total bytes written when unpacking one archive (default 1 GiB).
        public var maxUnpackedBytes: Int64
        /// Entries (files + folders) in one archive (default 100,000).
        public var maxEntries: Int
        /// Largest archive a manifest may announce (default 1 GiB).
        public var maxArchiveBytes: Int64

        public init(maxUnpackedBytes: Int64 = 1 << 30, maxEntries: Int = 100_000, maxArchiveBytes: Int64 = 1 << 30) {
            self.maxUnpackedBytes = maxUnpackedBytes
            self.maxEntries = maxEntries
            self.maxArchiveBytes = maxArchiveBytes
        }
    }

    package init(
        app: String, channelKind: ChannelKind, channelSettings: ChannelSection = ChannelSection(),
        shellVersion: Version, embeddedPath: String? = nil, deviceSettings: DeviceSettings = DeviceSettings(),
        allowInsecureHTTP: Bool = false, limits: Limits = Limits(), proxy: String? = nil, caFile: String? = nil
    ) {
        self.format = Self.currentFormat
        self.app = app
        self.channelKind = channelKind
        self.channelSettings = channelSettings
        self.shellVersion = shellVersion
        self.embeddedPath = embeddedPath
        self.deviceSettings = deviceSettings
        self.allowInsecureHTTP = allowInsecureHTTP
        self.limits = limits
        self.proxy = proxy
        self.caFile = caFile
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, app, channelKind, shellVersion, embeddedPath, allowInsecureHTTP, limits, proxy, caFile
    }

    static let coreKeys = Set(CodingKeys.allCases.map(\.rawValue)).union(DeviceSettings.keys)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        app = try c.decode(String.self, forKey: .app)
        channelKind = try c.decode(ChannelKind.self, forKey: .channelKind)
        shellVersion = try c.decode(Version.self, forKey: .shellVersion)
        embeddedPath = try c.decodeIfPresent(String.self, forKey: .embeddedPath)
        deviceSettings = try DeviceSettings(from: decoder)
        allowInsecureHTTP = try c.decode(Bool.self, forKey: .allowInsecureHTTP)
        limits = try c.decode(Limits.self, forKey: .limits)
        proxy = try c.decodeIfPresent(String.self, forKey: .proxy)
        caFile = try c.decodeIfPresent(String.self, forKey: .caFile)
        channelSettings = try ChannelSection.decode(from: decoder, coreKeys: Self.coreKeys)
    }

    public func encode(to encoder: any Encoder) throws {
        try channelSettings.encode(to: encoder, coreKeys: Self.coreKeys) { encoder in
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(format, forKey: .format)
            try c.encode(app, forKey: .app)
            try c.encode(channelKind, forKey: .channelKind)
            try c.encode(shellVersion, forKey: .shellVersion)
            try c.encodeIfPresent(embeddedPath, forKey: .embeddedPath)
            try c.encode(allowInsecureHTTP, forKey: .allowInsecureHTTP)
            try c.encode(limits, forKey: .limits)
            try c.encodeIfPresent(proxy, forKey: .proxy)
            try c.encodeIfPresent(caFile, forKey: .caFile)
            try deviceSettings.encode(to: encoder)
        }
    }

    /// Reads and validates a root's `config.json` at `path`: at most 1 MiB, not writable by
    /// other users (refused, as sshd's StrictModes refuses such files), every value in range
    /// and the URL rules of `URLPolicy` (checked at every load, not only at `init`).
    /// - Throws: ``DeviceSetupError`` `.configInvalid` (exit 78) naming the file and the reason.
    package static func load(path: String) throws(DeviceSetupError) -> DeviceConfig {
        guard let data = try BoundedFile.read(path, cap: BoundedFile.localStateCap, code: DeviceSetupError.Code.configInvalid) else {
            throw DeviceSetupError(.configInvalid, "\(path) not found: initialize the root first (`init`)")
        }
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IWOTH != 0 {
            throw DeviceSetupError(
                .configInvalid,
                "\(path) is writable by every user (mode \(String(st.st_mode & 0o7777, radix: 8))): refused; run chmod o-w on it")
        }
        let config: DeviceConfig
        do {
            config = try JSONDecoder().decode(DeviceConfig.self, from: data)
        } catch {
            throw DeviceSetupError(.configInvalid, "\(path) is not a valid clientctl config: \(error)")
        }
        guard config.format == currentFormat else {
            throw DeviceSetupError(.configInvalid, "\(path) has format '\(config.format)', expected '\(currentFormat)'")
        }
        if let problem = config.problem() { throw DeviceSetupError(.configInvalid, "\(path): \(problem)") }
        return config
    }

    /// The bytes of `config.json` (sorted keys, one trailing newline), after ``problem()``
    /// found nothing wrong.
    /// - Throws: ``DeviceSetupError`` `.invalidArgument` when a value is out of range;
    ///   `EncodingError` when the channel's section names a key of the core.
    package func encoded() throws -> Data {
        if let problem = problem() { throw DeviceSetupError(.invalidArgument, problem) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }
}
