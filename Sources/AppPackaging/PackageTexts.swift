import DeviceSetup
import Foundation

/// The text files a package carries besides the app: launcher, desktop entry and control
/// file here; the systemd units (`PackageTexts+Systemd.swift`), the udev rule and unit of
/// updates from removable media (`+Media`), copyright, changelog, lintian overrides and man
/// page (`+Docs`) and the apt source (`+Apt`) beside it. Pure functions of the request, so
/// the same inputs give the same bytes.
struct PackageTexts: Sendable {
    let request: PackageRequest
    let debianVersion: String

    var pkg: String { request.package }
    var share: String { "/usr/share/\(pkg)" }
    var lib: String { "/usr/lib/\(pkg)" }
    /// The one-line description; the default names the app without starting with the
    /// package's name (lintian's description-starts-with-package-name).
    var synopsis: String { request.description ?? "self-updating web app: \(request.name)" }

    /// `/usr/bin/PKG`: the shell with the package's template; the user's flags follow.
    var launcher: String {
        """
        #!/bin/sh
        # \(request.name) (\(request.app)): starts the native shell on the user's root,
        # made and kept from the package's template (clientctl package).
        exec \(lib)/clientctl-shell --template \(share) "$@"

        """
    }

    /// `/usr/share/applications/PKG.desktop` (Desktop Entry Specification 1.5).
    func desktopEntry(iconName: String) -> String {
        """
        [Desktop Entry]
        Type=Application
        Version=1.5
        Name=\(request.name)
        Comment=\(synopsis)
        Exec=\(pkg)
        Icon=\(iconName)
        Terminal=false
        Categories=\(request.category);
        StartupNotify=true

        """
    }

    /// `DEBIAN/control`.
    func control(architecture: String, depends: String, installedSize: Int64) -> String {
        var lines = [
            "Package: \(pkg)", "Version: \(debianVersion)", "Architecture: \(architecture)", "Maintainer: \(request.maintainer)",
            "Installed-Size: \(installedSize)",
        ]
        if !depends.isEmpty { lines.append("Depends: \(depends)") }
        lines += ["Section: \(request.section)", "Priority: optional", "\(Self.templateField): \(share)/\(DeviceTemplate.fileName)"]
        lines.append("Description: \(synopsis)")
        let extended =
            "\(request.name) (\(request.app)) in a native window (GTK, WebKitGTK) whose web layer updates itself from signed releases of the \(request.channel) channel, each on trial until it starts, with a systemd unit for headless devices."
        lines += Self.wrap(extended, width: 79).map { " " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The control field `clientctl repo add` looks for: the path of the package's device
    /// template (`/usr/share/PKG/device-template.json`).
    static let templateField = "X-Clientctl-Template"

    /// `text` in lines of at most `width` characters, broken between words (a word longer
    /// than `width` gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
