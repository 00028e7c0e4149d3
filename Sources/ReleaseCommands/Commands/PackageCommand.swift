import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl package BUILD_DIR …`: a client build becomes a Debian package of a native app.
struct PackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Turn a client build into a .deb: a native app whose web layer updates itself.",
        discussion: """
            Writes OUT/PKG_VERSION_ARCH.deb holding /usr/bin/PKG (starts the app), the \
            self-contained device program (the device's clientctl and clientctl-shell, \
            under /usr/lib/PKG/: the clientctl-device beside this clientctl, or the one \
            --device-program names; build it with Scripts/build-release), the client BUILD_DIR as \
            the embedded seed and a device template under /usr/share/PKG/, a desktop entry \
            and icon, a systemd user unit (kiosk session) and a system unit running `serve` \
            for headless devices (PKG-serve.service), copyright, changelog and a man page. \
            Depends are what dpkg-shlibdeps computes.

            The package version is the shell version of the roots it makes: each user's \
            first start creates ~/.local/share/APP from the template, and an upgrade \
            drops downloaded versions built for the old shell. The same inputs give the \
            same bytes (dates clamped to SOURCE_DATE_EPOCH, default 2000-01-01); an \
            existing .deb is never overwritten with other bytes (exit 73). With --origin \
            loopback the installed app serves its page from http://127.0.0.1:PORT/ \
            (clientctl-shell --origin loopback) for apps that need an http origin.

            With --apt-repo URL --apt-suite NAME --apt-key PUBLIC.asc the package also \
            ships its apt source: /etc/apt/sources.list.d/PKG.sources (a conffile) trusting \
            /usr/share/keyrings/PKG-archive-keyring.gpg for that source only, so once \
            installed by hand apt keeps the app current from a repository `clientctl repo` \
            maintains.

            Examples:
              clientctl package build/ --app com.example.notes --name Notes \\
                  --package notes --version 2.1.0 --channel stable \\
                  --manifest-url https://cdn.example.com/notes/stable/manifest.json \\
                  --trust keys/release.pub.pem --icon notes-256.png \\
                  --maintainer "Example Ltd <apps@example.com>" --out dist
              clientctl package build/ --app com.example.notes --name Notes \\
                  --package notes --version 2.2.0-beta.1 --channel beta \\
                  --manifest-url https://cdn.example.com/notes/beta/manifest.json \\
                  --trust-root releases/beta/root/1.json --icon notes.svg \\
                  --maintainer "Example Ltd <apps@example.com>" --out dist \\
                  --check-interval 600 --keep 5
              clientctl package build/ --app com.example.notes --name Notes \\
                  --package notes --version 2.1.0 --channel stable \\
                  --manifest-url https://cdn.example.com/notes/stable/manifest.json \\
                  --trust keys/release.pub.pem --icon notes.svg \\
                  --maintainer "Example Ltd <apps@example.com>" --out dist \\
                  --apt-repo https://apt.example.com/notes --apt-suite stable \\
                  --apt-key keys/archive.pub.asc
              clientctl package build/ --app com.example.notes --name Notes \\
                  --package notes --version 2.1.0 --channel stable \\
                  --manifest-url https://cdn.example.com/notes/stable/manifest.json \\
                  --trust keys/release.pub.pem --icon notes.svg \\
                  --maintainer "Example Ltd <apps@example.com>" --out dist \\
                  --device-program .build-release/dist/clientctl-device
            """
    )

    @Argument(help: ArgumentHelp("The client build shipped inside the app (must hold index.html).", valueName: "BUILD_DIR"))
    var buildDirectory: String
    @Option(help: ArgumentHelp("Application id, e.g. com.example.notes.", valueName: "ID"))
    var app: String
    @Option(help: ArgumentHelp("Display name: window title and menu entry.", valueName: "NAME"))
    var name: String
    @Option(help: ArgumentHelp("Debian package name; also the command /usr/bin/PKG.", valueName: "PKG"))
    var package: String
    @Option(help: ArgumentHelp("Package version = shell version (SemVer; a pre-release becomes ~).", valueName: "SEMVER"))
    var version: Version
    @Option(help: ArgumentHelp("Release channel devices follow, e.g. stable.", valueName: "NAME"))
    var channel: String
    @Option(name: .customLong("manifest-url"), help: ArgumentHelp("URL of the channel's manifest.json.", valueName: "URL"))
    var manifestURL: String
    @Option(name: .customLong("trust"), help: ArgumentHelp("A trusted Ed25519 public key (PEM); repeat for several.", valueName: "PUB.pem"))
    var trust: [String] = []
    @Option(name: .customLong("trust-root"), help: ArgumentHelp("A signed trust root to pin instead of --trust keys.", valueName: "ROOT.json"))
    var trustRoot: String?
    @Option(help: ArgumentHelp("App icon: a square PNG (16–512 px, a hicolor size) or an SVG.", valueName: "FILE"))
    var icon: String
    @Option(help: ArgumentHelp("Maintainer, as Debian takes it.", valueName: "\"Name <email>\""))
    var maintainer: String
    @Option(help: ArgumentHelp("Folder the .deb is written to.", valueName: "DIR"))
    var out: String
    @Option(help: ArgumentHelp("One-line synopsis (default: NAME, a self-updating web app).", valueName: "TEXT"))
    var description: String?
    @Option(help: ArgumentHelp("Main menu category of the desktop entry.", valueName: "CATEGORY"))
    var category = "Utility"
    @Option(help: ArgumentHelp("Debian section.", valueName: "SECTION"))
    var section = "web"
    @Option(help: ArgumentHelp("The vendor's copyright text for the client.", valueName: "FILE"))
    var copyright: String?
    @OptionGroup var template: PackageTemplateOptions
    @OptionGroup var apt: AptSourceOptions
    @Option(
        name: .customLong("device-program"),
        help: ArgumentHelp(
            "The self-contained clientctl-device to ship (default: the one beside this clientctl).", valueName: "FILE"))
    var deviceProgram: String?
    @Option(
        help: ArgumentHelp(
            "How the .deb is compressed: xz (level 6, as Debian's packages), gzip (level 1, fast) or none.",
            valueName: "xz|gzip|none"))
    var compression = "xz"
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard DebCompression(rawValue: compression) != nil else {
            throw ValidationError("--compression must be one of \(DebCompression.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        try template.check()
        try apt.check()
        guard trust.isEmpty != (trustRoot == nil) else {
            throw ValidationError("give --trust keys or one --trust-root: a device trusts only what its package names")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            var request = PackageRequest(
                buildDirectory: buildDirectory, app: app, name: name, package: package, version: version, channel: channel,
                manifestURL: manifestURL, trust: trust, trustRoot: trustRoot, icon: icon, maintainer: maintainer, out: out,
                description: description, category: category, section: section, copyrightFile: copyright,
                deviceSettings: template.settings.deviceSettings, checkIntervalSeconds: template.checkInterval, origin: template.origin,
                aptSource: apt.source)
            request.compression = DebCompression(rawValue: compression) ?? .xz
            let result = try DebPackager.build(request, deviceProgram: deviceProgram)
            if output.json {
                Console.out(Data(JSONPrettyPrinter.render(.object(result.jsonObject))))
            } else {
                print(result.path)
                printError(result.summary)
            }
        }
    }
}
