import ArgumentParser
import ClientEngine
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import CommandSupport
import DeviceSetup
import Foundation
import MeteorHotCodePush
import SignedArchive
import SignedManifest

/// `clientctl init`: creates a device root's `config.json`.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a device root: which app and channel, whom to trust, which shell.",
        discussion: """
            Writes DIR/config.json (trusted public keys are copied into it, so the root is \
            self-contained). Refuses to overwrite an existing config unless --force.

            Examples:
              clientctl init --root /var/lib/notes --app com.example.notes \\
                --channel stable \\
                --manifest-url https://cdn.example.com/notes/stable/manifest.json \\
                --trust release.pub.pem --shell-version 2.1.0 \\
                --embedded /opt/notes/www
              clientctl init --root ./device --app com.example.notes --channel beta \\
                --manifest-url file:///srv/releases/beta/manifest.json \\
                --trust Keys/test-release.pub.pem --shell-version 1.0.0 --keep 5 \\
                --report-url http://127.0.0.1:9400/
              # Switch releases published with --apply window only at night,
              # Berlin time (windows may cross midnight; repeat for several)
              clientctl init --root /var/lib/kiosk --app com.example.kiosk \\
                --channel stable \\
                --manifest-url https://cdn.example.com/kiosk/stable/manifest.json \\
                --trust release.pub.pem --shell-version 2.1.0 \\
                --embedded /opt/kiosk/www \\
                --apply-window 02:00-04:00 --timezone Europe/Berlin
              # A shop behind a site mirror on its LAN (the origin is asked last,
              # and for the manifest first while it answers)
              clientctl init --root /var/lib/kiosk --app com.example.kiosk \\
                --channel stable \\
                --manifest-url https://cdn.example.com/kiosk/stable/manifest.json \\
                --mirror http://mirror.shop.lan/kiosk/stable/manifest.json \\
                --trust release.pub.pem --shell-version 2.1.0
              # Meteor hot code push: appId and ROOT_URL come from the embedded
              # index.html
              clientctl init --root /var/lib/todos \\
                --meteor-url https://todos.example.com/ \\
                --embedded /opt/todos/www/application --compat-platform android
            """
    )

    @OptionGroup var device: DeviceOptions
    @Option(help: ArgumentHelp("Application id, e.g. com.example.notes; releases of other apps are rejected.", valueName: "ID"))
    var app: String?
    @Option(
        help: ArgumentHelp(
            "Release channel name, e.g. stable; releases of other channels are rejected unless the trust root lets the device choose them ('channel set').",
            valueName: "NAME"))
    var channel: String?
    @Option(
        name: .customLong("manifest-url"),
        help: ArgumentHelp("URL of the channel's manifest.json (https:, http: to loopback, or file:).", valueName: "URL"))
    var manifestURL: String?
    @Option(
        name: .customLong("mirror"),
        help: ArgumentHelp(
            "A site mirror's URL of the same manifest.json, tried before the origin (https:, or http: to any host: everything is verified); repeat for several, in order.",
            valueName: "URL"))
    var mirror: [String] = []
    @Option(name: .customLong("trust"), help: ArgumentHelp("A trusted Ed25519 public key (PEM); repeat for several.", valueName: "PUB.pem"))
    var trust: [String] = []
    @Option(
        name: .customLong("trust-root"),
        help: ArgumentHelp("A signed trust root of the channel (root/N.json) to pin instead of --trust keys.", valueName: "ROOT.json"))
    var trustRoot: String?
    @Option(
        name: .customLong("shell-version"),
        help: ArgumentHelp("Version of the native shell on this device (required for archive roots).", valueName: "SEMVER"))
    var shellVersion: Version?
    @Option(name: .customLong("meteor-url"), help: ArgumentHelp("Meteor server ROOT_URL: makes this a Meteor hot-code-push root.", valueName: "URL"))
    var meteorURL: String?
    @Option(
        name: .customLong("compat-platform"),
        help: ArgumentHelp("Meteor only: which cordovaCompatibilityVersions entry to compare.", valueName: "ios|android"))
    var compatPlatform: String?
    @Option(help: ArgumentHelp("Read-only client shipped inside the shell (must hold index.html).", valueName: "DIR"))
    var embedded: String?
    @OptionGroup var settings: RootSettingsOptions
    @Flag(name: .customLong("allow-insecure-http"), help: "Allow http: URLs to hosts other than loopback (not recommended).")
    var allowInsecureHTTP = false
    @Option(name: .customLong("max-unpacked-bytes"), help: ArgumentHelp("Cap on bytes unpacked from one archive.", valueName: "BYTES"))
    var maxUnpackedBytes: Int64 = DeviceConfig.Limits().maxUnpackedBytes
    @Option(name: .customLong("max-entries"), help: ArgumentHelp("Cap on entries in one archive.", valueName: "N"))
    var maxEntries: Int = DeviceConfig.Limits().maxEntries
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp("PEM file of the CA certificates to trust for https: instead of the system store (a private CA).", valueName: "CA.pem"))
    var caFile: String?
    @Option(
        help: ArgumentHelp(
            "Proxy for every request (http://host:port), instead of the HTTPS_PROXY/HTTP_PROXY environment; NO_PROXY still applies.", valueName: "URL"
        ))
    var proxy: String?
    @Flag(help: "Overwrite an existing config.json (installed versions and state are kept).")
    var force = false

    func validate() throws {
        guard DeviceConfig.byteLimitRange.contains(maxUnpackedBytes) else {
            throw ValidationError("--max-unpacked-bytes \(maxUnpackedBytes) is out of range: 1…\(DeviceConfig.byteLimitRange.upperBound)")
        }
        guard DeviceConfig.entryLimitRange.contains(maxEntries) else {
            throw ValidationError("--max-entries \(maxEntries) is out of range: 1…\(DeviceConfig.entryLimitRange.upperBound)")
        }
        if settings.deviceSettings.usesSystemZone {
            do { _ = try DeviceSettings.systemZone() } catch { throw ValidationError("\(error)") }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            if let meteorURL {
                try await initMeteor(url: meteorURL)
                return
            }
            if compatPlatform != nil {
                throw DeviceCommandError(.invalidArgument, "--compat-platform is only used with --meteor-url")
            }
            guard let shellVersion else {
                throw DeviceCommandError(.invalidArgument, "--shell-version is required (the SemVer version of the native shell)")
            }
            var request = ArchiveRootSetup.Request(
                app: app, channel: channel, manifestURL: manifestURL, trustFiles: trust, shellVersion: shellVersion.description,
                embedded: embedded, deviceSettings: settings.deviceSettings, allowInsecureHTTP: allowInsecureHTTP,
                limits: .init(maxUnpackedBytes: maxUnpackedBytes, maxEntries: maxEntries), trustRootFile: trustRoot)
            request.mirrors = mirror
            let layout = try device.layout()
            let (made, pinned) = try ArchiveRootSetup.make(request)
            let config = try transportSettings(made)
            try await DeviceEngine.create(.init(config: config, trustRoot: pinned), at: layout, existing: force ? .overwrite : .refuse)
            printError("initialized \(layout.root) for \(config.app) (\(config.channelKind.rawValue), channel \(request.channel ?? "-"))")
        }
    }

    /// A Meteor root: config from the flags and the embedded bundle, plus the first state.
    private func initMeteor(url: String) async throws {
        if app != nil || channel != nil || manifestURL != nil || !trust.isEmpty || trustRoot != nil || !mirror.isEmpty {
            throw DeviceCommandError(
                .invalidArgument,
                "--app, --channel, --manifest-url, --mirror, --trust and --trust-root are not used with --meteor-url (the appId comes from the embedded index.html)"
            )
        }
        let layout = try device.layout()
        var (config, state) = try MeteorRootSetup.make(
            .init(
                meteorURL: url, embedded: embedded, compatPlatform: compatPlatform, shellVersion: shellVersion?.description,
                deviceSettings: settings.deviceSettings, allowInsecureHTTP: allowInsecureHTTP))
        config = try transportSettings(config)
        try await DeviceEngine.create(.init(config: config, state: state), at: layout, existing: force ? .overwrite : .refuse)
        printError("initialized \(layout.root) for \(config.app) (meteor, \(url), \(compatPlatform ?? "ios"))")
    }

    /// `--ca-file` (loaded as the transport loads it, stored as an absolute path) and
    /// `--proxy` into `config` (`--report-url` is one of the settings the setup checked).
    private func transportSettings(_ config: DeviceConfig) throws -> DeviceConfig {
        var config = config
        if let caFile {
            let path = RootLayout(root: caFile).root
            do {
                _ = try CAFile.load(path)
            } catch let error as HTTPTransportError {
                // Content the transport would refuse is bad data (65), as at every install
                // it would be a bad config (78); a path that cannot be read is a bad flag (64).
                let code: DeviceCommandError.Code = error.code == .rejected || error.code == .tooLarge ? .rejected : .invalidArgument
                throw DeviceCommandError(code, "--ca-file: \(error.message)")
            }
            config.caFile = path
        }
        if let proxy {
            do {
                _ = try ProxyEndpoint(parsing: proxy, source: "--proxy")
            } catch let error as HTTPTransportError {
                throw DeviceCommandError(.invalidArgument, error.message)
            }
            config.proxy = proxy
        }
        return config
    }
}
