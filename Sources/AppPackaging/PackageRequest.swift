import ClientFoundation
import Foundation

/// What `clientctl package` was asked to build.
public struct PackageRequest: Sendable {
    /// The client build shipped inside the app (the embedded seed).
    public var buildDirectory: String
    public var app: String
    /// Display name (window title, desktop entry).
    public var name: String
    /// Debian package name; also the command, `/usr/bin/PKG`.
    public var package: String
    /// The package's version, which is the shell version of the roots it makes.
    public var version: Version
    public var channel: String
    public var manifestURL: String
    public var trust: [String]
    public var trustRoot: String?
    public var icon: String
    /// `Name <email>`.
    public var maintainer: String
    /// Folder the .deb is written to (created when missing).
    public var out: String
    /// The one-line synopsis (default: "NAME, a self-updating web app").
    public var description: String?
    /// The desktop entry's main category (freedesktop menu spec).
    public var category: String
    /// The Debian section.
    public var section: String
    /// The vendor's copyright text for the client (default: a line naming the maintainer).
    public var copyrightFile: String?
    public var startupTimeoutSeconds: Double
    public var keep: Int
    public var checkIntervalSeconds: Int

    public init(
        buildDirectory: String, app: String, name: String, package: String, version: Version, channel: String, manifestURL: String,
        trust: [String], trustRoot: String?, icon: String, maintainer: String, out: String, description: String? = nil,
        category: String = "Utility", section: String = "web", copyrightFile: String? = nil, startupTimeoutSeconds: Double = 10,
        keep: Int = 3, checkIntervalSeconds: Int = 3600
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
        self.startupTimeoutSeconds = startupTimeoutSeconds
        self.keep = keep
        self.checkIntervalSeconds = checkIntervalSeconds
    }

    /// The main categories of the freedesktop menu specification.
    public static let categories = [
        "AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network", "Office", "Science", "Settings",
        "System", "Utility",
    ]
}

/// What `clientctl package` wrote.
public struct PackageResult: Sendable {
    /// The .deb: `OUT/PKG_VERSION_ARCH.deb`.
    public var path: String
    public var bytes: Int64
    public var sha256: String
    /// The Debian version (`1.4.0~beta.1`).
    public var debianVersion: String
    public var architecture: String
    /// The Depends field, as dpkg-shlibdeps computed it.
    public var depends: String
    public var installedSizeKiB: Int64
    /// The same .deb was there already, byte for byte: nothing was written.
    public var unchanged: Bool
}
