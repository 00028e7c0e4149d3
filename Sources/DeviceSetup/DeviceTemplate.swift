import ClientFoundation
import Foundation

/// `device-template.json`: how a packaged app makes and keeps its device roots.
///
/// `clientctl package` writes it under `/usr/share/PKG/` beside the seed and the trusted
/// keys; the app's launcher (`clientctl-shell --template`) and `clientctl serve --template`
/// read it at every start: the first start creates the root from it (as `init` would), and
/// every start applies its shell version and seed, so a package upgrade is the root's shell
/// update (docs/packaging.md).
///
/// Paths in it (`seed`, `trust`, `trustRoot`) are relative to the folder that holds it, so
/// the package can be unpacked anywhere and tested before it is installed.
public struct DeviceTemplate: Codable, Sendable, Equatable, CarriesDeviceSettings {
    /// The file name inside a template folder.
    public static let fileName = "device-template.json"
    /// The only format this version reads.
    public static let currentFormat = "clientctl-device-template-v1"
    /// Largest template file read (it holds names and paths, not keys).
    public static let maxBytes = 64 * 1024

    public var format: String
    /// Application id (`com.example.notes`): also the name of the per-user root folder.
    public var app: String
    /// The app's display name (window title, desktop entry).
    public var name: String
    /// Release channel the root follows.
    public var channel: String
    /// The channel's `manifest.json` URL.
    public var manifestURL: String
    /// Trusted public keys (PEM files), relative to the template folder.
    public var trust: [String]
    /// A signed trust root to pin instead of `trust`, relative to the template folder.
    public var trustRoot: String?
    /// The version of the shell this package carries: the package's version.
    public var shellVersion: String
    /// The client shipped inside the package (the embedded seed), relative to the template folder.
    public var seed: String
    /// What the template shares with `init` and `config.json`: the startup timeout,
    /// retention, the report URL (under their own keys beside the template's).
    public var deviceSettings: DeviceSettings
    /// Seconds between update checks of the shell and `serve`; 0: only when the page asks.
    public var checkIntervalSeconds: Int
    /// Where the shell serves the page: `"app"` (`app://APPID/`, also when absent) or
    /// `"loopback"` (`http://127.0.0.1:PORT/`, for apps that need an http origin). The
    /// shell's `--origin` wins; `serve` always answers over http.
    public var origin: String?

    /// The values ``origin`` may take.
    public static let origins = ["app", "loopback"]

    public init(
        app: String, name: String, channel: String, manifestURL: String, trust: [String], trustRoot: String?,
        shellVersion: String, seed: String = "www", deviceSettings: DeviceSettings = DeviceSettings(),
        checkIntervalSeconds: Int = 3600, origin: String? = nil
    ) {
        self.format = Self.currentFormat
        self.app = app
        self.name = name
        self.channel = channel
        self.manifestURL = manifestURL
        self.trust = trust
        self.trustRoot = trustRoot
        self.shellVersion = shellVersion
        self.seed = seed
        self.deviceSettings = deviceSettings
        self.checkIntervalSeconds = checkIntervalSeconds
        self.origin = origin
    }

    enum CodingKeys: String, CodingKey {
        case format, app, name, channel, manifestURL, trust, trustRoot, shellVersion, seed, checkIntervalSeconds, origin
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        app = try c.decode(String.self, forKey: .app)
        name = try c.decode(String.self, forKey: .name)
        channel = try c.decode(String.self, forKey: .channel)
        manifestURL = try c.decode(String.self, forKey: .manifestURL)
        trust = try c.decode([String].self, forKey: .trust)
        trustRoot = try c.decodeIfPresent(String.self, forKey: .trustRoot)
        shellVersion = try c.decode(String.self, forKey: .shellVersion)
        seed = try c.decode(String.self, forKey: .seed)
        checkIntervalSeconds = try c.decode(Int.self, forKey: .checkIntervalSeconds)
        origin = try c.decodeIfPresent(String.self, forKey: .origin)
        deviceSettings = try DeviceSettings(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(app, forKey: .app)
        try c.encode(name, forKey: .name)
        try c.encode(channel, forKey: .channel)
        try c.encode(manifestURL, forKey: .manifestURL)
        try c.encode(trust, forKey: .trust)
        try c.encodeIfPresent(trustRoot, forKey: .trustRoot)
        try c.encode(shellVersion, forKey: .shellVersion)
        try c.encode(seed, forKey: .seed)
        try c.encode(checkIntervalSeconds, forKey: .checkIntervalSeconds)
        try c.encodeIfPresent(origin, forKey: .origin)
        try deviceSettings.encode(to: encoder)
    }

    /// The template's bytes: sorted keys, one trailing newline (reproducible).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// Reads `folder/device-template.json`, checking its format and that its paths stay
    /// inside `folder`.
    /// - Throws: ``DeviceSetupError`` `.notFound` when the file is missing, `.configInvalid`
    ///   for anything else wrong with it (naming the file and why).
    public static func load(folder: String) throws -> DeviceTemplate {
        let path = folder + "/" + fileName
        guard let data = try BoundedFile.read(path, cap: maxBytes, code: DeviceSetupError.Code.configInvalid) else {
            throw DeviceSetupError(.notFound, "\(path) not found: --template names the folder a package installed (/usr/share/PKG)")
        }
        let template: DeviceTemplate
        do {
            template = try JSONDecoder().decode(DeviceTemplate.self, from: data)
        } catch {
            throw DeviceSetupError(.configInvalid, "\(path) is not a valid device template: \(error)")
        }
        guard template.format == currentFormat else {
            throw DeviceSetupError(.configInvalid, "\(path) has format '\(template.format)', expected '\(currentFormat)'")
        }
        for relative in [template.seed] + template.trust + [template.trustRoot].compactMap({ $0 }) where !Self.isInside(relative) {
            throw DeviceSetupError(.configInvalid, "\(path): '\(relative)' is not a path inside the template folder")
        }
        guard (0...604_800).contains(template.checkIntervalSeconds) else {
            throw DeviceSetupError(.configInvalid, "\(path): checkIntervalSeconds \(template.checkIntervalSeconds) is out of range 0…604800")
        }
        if let origin = template.origin, !origins.contains(origin) {
            throw DeviceSetupError(.configInvalid, "\(path): origin '\(origin)' is not one of \(origins.joined(separator: ", "))")
        }
        if let problem = template.deviceSettings.problem(allowInsecureHTTP: false) {
            throw DeviceSetupError(.configInvalid, "\(path): \(problem)")
        }
        return template
    }

    /// A relative path without `..`, empty or absolute components.
    static func isInside(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        return !relative.isEmpty && !relative.hasPrefix("/") && !parts.contains { $0.isEmpty || $0 == "." || $0 == ".." }
    }

    /// The per-user root of this app: `$XDG_DATA_HOME/APP`, else `$HOME/.local/share/APP`
    /// (the XDG Base Directory default), like a browser's profile.
    /// - Throws: ``DeviceSetupError`` `.invalidArgument` when neither variable names an absolute folder.
    public func userRoot(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/" + app }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/share/" + app }
        throw DeviceSetupError(.invalidArgument, "no device root: HOME and XDG_DATA_HOME are unset; pass --root DIR")
    }
}
