import Foundation

/// What a Debian package documents about itself: copyright, changelog, lintian overrides
/// and the man page.
extension PackageTexts {
    /// `/usr/share/doc/PKG/copyright` (machine-readable format 1.0).
    func copyright(vendorText: String?) -> String {
        let vendor =
            vendorText.map { text in
                text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? " ." : " " + $0 }.joined(separator: "\n")
            } ?? " The web client and its assets are distributed by \(request.maintainer)\n under the vendor's own terms."
        return """
            Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
            Upstream-Name: \(request.name)
            Upstream-Contact: \(request.maintainer)

            Files: *
            Copyright: \(request.maintainer)
            License: vendor
            \(vendor)

            Files: usr/lib/\(pkg)/*
            Copyright: 2026 the clientctl authors
                       2014-2026 Apple Inc. and the Swift project authors
            License: Apache-2.0
             The Swift runtime, Foundation and the Swift packages statically linked into
             this program are under the Apache License 2.0 (with the Runtime Library
             Exception where it applies); on Debian systems its full text is in
             /usr/share/common-licenses/Apache-2.0. The program also carries zlib, which
             swift-nio-extras compiles in, under the zlib license.

            """
    }

    /// The Debian changelog of this one version (native package: `changelog.gz`).
    func changelog(date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return """
            \(pkg) (\(debianVersion)) unstable; urgency=medium

              * \(request.name) \(request.version): client build packaged by clientctl,
                following channel \(request.channel).

             -- \(request.maintainer)  \(formatter.string(from: date))

            """
    }

    /// `/usr/share/lintian/overrides/PKG`: the lintian tags a self-contained program, the
    /// control field `repo add` reads and (with `--apt-repo`) a vendor's apt source cannot
    /// avoid, each with its reason (docs/packaging.md#lintian).
    var lintianOverrides: String {
        var text = """
            # AsyncHTTPClient decompresses responses with swift-nio-extras' NIOHTTPCompression,
            # which compiles in its own zlib; a self-contained (--static-swift-stdlib) program
            # carries it. Debian's zlib1g cannot replace it without rebuilding that package.
            embedded-library zlib [usr/lib/\(pkg)/clientctl]
            # The control field that marks a package clientctl made (and names its template):
            # `clientctl repo add` carries only such packages.
            unknown-field \(Self.templateField)

            """
        if request.aptSource != nil {
            text += """
                # A vendor's app brings its own apt source, as Chrome's does, so apt keeps it
                # current after the first install by hand; trusted with its own keyring only
                # (Signed-By), a conffile the admin may edit or remove.
                package-installs-apt-sources [\(sourcesPath.dropFirst())]

                """
        }
        return text
    }

    /// `PKG(1)`, in man(7) macros.
    var manPage: String {
        func roff(_ s: String) -> String { s.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-") }
        return """
            .TH \(roff(pkg.uppercased())) 1 "" "\(roff(pkg)) \(roff(debianVersion))" "User Commands"
            .SH NAME
            \(roff(pkg)) \\- \(roff(synopsis))
            .SH SYNOPSIS
            .B \(roff(pkg))
            [\\fB\\-\\-kiosk\\fR] [\\fB\\-\\-fullscreen\\fR] [\\fB\\-\\-root\\fR \\fIDIR\\fR] [\\fB\\-\\-events\\fR]
            .SH DESCRIPTION
            .B \(roff(pkg))
            runs \(roff(request.name)) (\(roff(request.app))) in a native window.
            Its web layer updates itself from signed releases of the
            .I \(roff(request.channel))
            channel: a new version runs on trial and is rolled back unless it starts.
            The first start creates the user's root from the package's template; every start
            applies the shell version of the installed package.
            .SH OPTIONS
            Every option of
            .BR clientctl\\-shell ;
            see
            .B \(roff(lib))/clientctl\\-shell \\-\\-help.
            .TP
            .BI \\-\\-root " DIR"
            Use DIR as the device root instead of the user's.
            .TP
            .B \\-\\-kiosk
            Full screen, no context menu, no navigation away from the app.
            .SH FILES
            .TP
            .I $XDG_DATA_HOME/\(roff(request.app))
            The user's root (default
            .IR ~/.local/share/\(roff(request.app)) ):
            installed versions, state and web storage. Purging the package leaves it.
            .TP
            .I \(roff(share))
            The template and the client shipped with the package.
            .TP
            .I /lib/systemd/system/\(roff(pkg))\\-serve.service
            The headless agent: the client served on 127.0.0.1, its root in
            .IR /var/lib/\(roff(pkg)) .
            .TP
            .I /lib/systemd/system/\(roff(pkg))\\-media@.service
            Installs from a USB stick as it is plugged in, with no command typed: its udev rule,
            .IR \(roff(mediaRulePath)) ,
            starts it for a vfat, exfat or ext4 file system on the USB bus; the stick is mounted
            read\\-only and nothing is sent to any network.
            .SH EXIT STATUS
            0 on success; otherwise a
            .BR sysexits (3)
            status, with one line on standard error naming what failed and why.

            """
    }
}
