import Foundation

/// What an app vendor hands `clientctl package`: a client build, a release key, an icon
/// (Chromium's, as Debian ships it: a real hicolor PNG), and the flags of the issue's
/// example, with a package name no real package uses.
public struct PackageInputs {
    public static let package = "clientctl-test-notes"
    public static let app = "com.example.packaged"
    /// Debian's chromium package installs it (Scripts/test installs chromium).
    public static let icon = "/usr/share/icons/hicolor/48x48/apps/chromium.png"

    public let tmp: TemporaryDirectory
    public var build: String { tmp("build") }

    public init(_ label: String, seedScript: String = ReleaseRig.acknowledging) throws {
        tmp = try TemporaryDirectory(label)
        try FileManager.default.createDirectory(atPath: tmp("build/assets"), withIntermediateDirectories: true)
        try ReleaseRig.page(version: "seed", script: seedScript).write(to: URL(fileURLWithPath: tmp("build/index.html")))
        try Data("body { margin: 0 }\n".utf8).write(to: URL(fileURLWithPath: tmp("build/assets/app.css")))
    }

    /// `package BUILD …` with every required flag; `replacing` swaps a flag's value.
    public func arguments(
        version: String = "1.0.0", out: String? = nil, manifestURL: String = "http://127.0.0.1:9/stable/manifest.json",
        replacing: [String: String] = [:], extra: [String] = []
    ) -> [String] {
        var flags: [(String, String)] = [
            ("--app", Self.app), ("--name", "Packaged Notes"), ("--package", Self.package), ("--version", version),
            ("--channel", "stable"), ("--manifest-url", manifestURL),
            ("--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem")), ("--icon", Self.icon),
            ("--maintainer", "Example Ltd <apps@example.com>"), ("--out", out ?? tmp("dist")),
        ]
        flags = flags.map { ($0.0, replacing[$0.0] ?? $0.1) }
        return ["package", replacing["BUILD"] ?? build] + flags.flatMap { [$0.0, $0.1] } + extra
    }

    /// The .deb's name for `version` (Debian's form of it) on this machine.
    public static func debName(_ debianVersion: String) -> String { "\(package)_\(debianVersion)_\(architecture).deb" }

    /// dpkg's name of this machine's architecture.
    public static let architecture: String = {
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return machine == "aarch64" ? "arm64" : "amd64"
    }()
}
