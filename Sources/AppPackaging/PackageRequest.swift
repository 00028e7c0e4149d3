import ClientFoundation
import DeviceSetup
import Foundation

/// What `clientctl package` was asked to build.
package struct PackageRequest: Sendable {
    /// The client build shipped inside the app (the embedded seed).
    package var buildDirectory: String
    package var app: String
    /// Display name (window title, desktop entry).
    package var name: String
    /// Debian package name; also the command, `/usr/bin/PKG`.
    package var package: String
    /// The package's version, which is the shell version of the roots it makes.
    package var version: Version
    package var channel: String
    package var manifestURL: String
    package var trust: [String]
    package var trustRoot: String?
    package var icon: String
    /// `Name <email>`.
    package var maintainer: String
    /// Folder the .deb is written to (created when missing).
    package var out: String
    /// The one-line synopsis (default: "NAME, a self-updating web app").
    package var description: String?
    /// The desktop entry's main category (freedesktop menu spec).
    package var category: String
    /// The Debian section.
    package var section: String
    /// The vendor's copyright text for the client (default: a line naming the maintainer).
    package var copyrightFile: String?
    /// The startup timeout, retention and report URL the template carries.
    package var deviceSettings: DeviceSettings
    package var checkIntervalSeconds: Int
    /// Where the installed app's shell serves its page: `app` or `loopback`
    /// (``DeviceSetup/DeviceTemplate/origin``).
    package var origin: String
    /// The apt repository the package names as its own source (`--apt-repo`), or `nil`.
    package var aptSource: AptSource?
    /// How `dpkg-deb` compresses the package's members (`--compression`; xz by default).
    package var compression: DebCompression = .xz

    package init(
        buildDirectory: String, app: String, name: String, package: String, version: Version, channel: String, manifestURL: String,
        trust: [String], trustRoot: String?, icon: String, maintainer: String, out: String, description: String? = nil,
        category: String = "Utility", section: String = "web", copyrightFile: String? = nil,
        deviceSettings: DeviceSettings = DeviceSettings(), checkIntervalSeconds: Int = 3600, origin: String = "app",
        aptSource: AptSource? = nil
    ) {
        self.buildDirectory = buildDirectory
        self.app = app
        self.name = name
        self.package = package
        self.version = version
        self.channel = channel
        self.manifestURL = manifestURL
        self.trust = trust
        self.trustRoot = trustRoot
        self.icon = icon
        self.maintainer = maintainer
        self.out = out
        self.description = description
        self.category = category
        self.section = section
        self.copyrightFile = copyrightFile
        self.deviceSettings = deviceSettings
        self.checkIntervalSeconds = checkIntervalSeconds
        self.origin = origin
        self.aptSource = aptSource
    }

    /// The main categories of the freedesktop menu specification.
    package static let categories = [
        "AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network", "Office", "Science", "Settings",
        "System", "Utility",
    ]
}

/// The apt repository a package ships as its source (`package --apt-repo URL --apt-suite
/// NAME --apt-key PUBLIC.asc`): apt then keeps the app current, trusting that key for that
/// source only (docs/packaging.md#updates-through-apt).
package struct AptSource: Sendable {
    /// The repository's URL (`http:` or `https:`), the folder holding `dists/` and `pool/`.
    package var url: String
    /// The suite: the channel's name (`stable`, `beta`).
    package var suite: String
    /// The repository's public OpenPGP key, armored or binary.
    package var keyFile: String

    package init(url: String, suite: String, keyFile: String) {
        self.url = url
        self.suite = suite
        self.keyFile = keyFile
    }
}

/// What `clientctl package` wrote.
package struct PackageResult: Sendable {
    /// The .deb: `OUT/PKG_VERSION_ARCH.deb`.
    package var path: String
    package var bytes: Int64
    package var sha256: String
    /// The Debian version (`1.4.0~beta.1`).
    package var debianVersion: String
    package var architecture: String
    /// The Depends field, as dpkg-shlibdeps computed it.
    package var depends: String
    package var installedSizeKiB: Int64
    /// The same .deb was there already, byte for byte: nothing was written.
    package var unchanged: Bool
}

/// How a `.deb`'s members are compressed (`package --compression`): xz at level 6, what
/// Debian's own packages use and the default; gzip at level 1, fast; or none. Every
/// setting gives a package dpkg and apt install alike; only the size and the time to
/// build it differ (the tests build many packages and use the fast settings).
package enum DebCompression: String, CaseIterable, Sendable {
    case xz, gzip, none

    /// `dpkg-deb`'s flags for it.
    var dpkgArguments: [String] {
        switch self {
        case .xz: ["-Zxz", "-z6"]
        case .gzip: ["-Zgzip", "-z1"]
        case .none: ["-Znone"]
        }
    }
}
