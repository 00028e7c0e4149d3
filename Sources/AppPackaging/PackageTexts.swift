import ClientFoundation
import DeviceSetup
import Foundation

/// The text files a package carries besides the app: launcher, desktop entry, systemd
/// units, copyright, changelog, man page and control file. Pure functions of the request,
/// so the same inputs give the same bytes.
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

    /// `/usr/lib/systemd/user/PKG.service`: the app in a kiosk session, supervised through
    /// the notify protocol (READY at first paint, WATCHDOG from GTK's main loop).
    var userUnit: String {
        """
        [Unit]
        Description=\(request.name) (kiosk session)
        Documentation=man:\(pkg)(1)
        PartOf=graphical-session.target
        After=graphical-session.target

        [Service]
        Type=notify
        NotifyAccess=main
        ExecStart=/usr/bin/\(pkg) --kiosk
        Restart=on-failure
        RestartSec=2
        TimeoutStartSec=90
        WatchdogSec=30

        [Install]
        WantedBy=graphical-session.target

        """
    }

    /// `/lib/systemd/system/PKG-serve.service`: `clientctl serve` for a headless device,
    /// unprivileged (a dynamic user), its root in `StateDirectory=`, hardened
    /// (docs/packaging.md lists what each setting takes away).
    var systemUnit: String {
        """
        [Unit]
        Description=\(request.name) device agent (clientctl serve on 127.0.0.1)
        Documentation=man:\(pkg)(1)
        Wants=network-online.target
        After=network-online.target

        [Service]
        Type=notify
        NotifyAccess=main
        ExecStart=\(lib)/clientctl serve --template \(share) --root /var/lib/\(pkg)
        Restart=on-failure
        RestartSec=2
        WatchdogSec=30
        DynamicUser=yes
        User=\(serviceUser)
        StateDirectory=\(pkg)
        StateDirectoryMode=0750
        UMask=0027
        \(sandbox(addressFamilies: "AF_INET AF_INET6 AF_UNIX"))

        [Install]
        WantedBy=multi-user.target

        """
    }

    /// The dynamic user `PKG-serve.service` and `PKG-media@.service` both run as, named in
    /// both (`User=` with `DynamicUser=yes`, systemd.exec(5)) so that they share one UID
    /// while they run and so the state directory `/var/lib/PKG`. `PKG-serve` is the name
    /// systemd derives for the serve unit itself when it is a valid user name (a letter or
    /// `_` first, then letters, digits, `_` and `-`, at most 31 characters); a package name
    /// that makes it invalid (a leading digit, `+` or `.`, or a long name) gets
    /// `_clientctl-` and 12 hex digits of the name's SHA-256 instead, never systemd's own
    /// hashed name, which another unit cannot spell.
    var serviceUser: String {
        let derived = "\(pkg)-serve"
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        if derived.count <= 31, let first = derived.first, first.isASCII, first.isLetter || first == "_", derived.allSatisfy(allowed.contains) {
            return derived
        }
        return "_clientctl-" + Digest.hex(.sha256, of: Data(pkg.utf8)).prefix(12)
    }

    /// `/lib/udev/rules.d/61-PKG-media.rules`: numbered after udev's own
    /// `60-persistent-storage.rules`, whose `usb_id` and `blkid` set the `ID_BUS` and `ID_FS_*`
    /// properties the rule matches (rules files run in the lexical order of their names,
    /// udev(7); `60-PKG-…` would sort before `60-persistent-…` and match nothing).
    var mediaRulePath: String { "/lib/udev/rules.d/61-\(pkg)-media.rules" }
    /// `/lib/systemd/system/PKG-media@.service`: the template the rule starts, one instance
    /// per block device (`PKG-media@sdb1.service`).
    var mediaUnitPath: String { "/lib/systemd/system/\(pkg)-media@.service" }
    /// Where an instance mounts its stick: its `RuntimeDirectory=` (`%i` the kernel name).
    var mediaMountPoint: String { "/run/\(pkg)-media/%i" }

    /// The udev rule that starts `PKG-media@KERNEL.service` when a USB stick's file system
    /// appears (udev(7) syntax: comma-separated `KEY==value` matches, then assignments).
    var mediaRule: String {
        """
        # \(request.name) (\(request.app)): an update from a USB stick with no command typed
        # (clientctl package; docs/packaging.md#updates-from-removable-media).
        #
        # Narrow on purpose: only when a block device is added, only on the USB bus, only a
        # file system (not swap, RAID or LUKS members) of type vfat, exfat or ext4. A broad
        # automount rule (every sd* and mmcblk* device) mounted a system partition and broke
        # updates (ValveSoftware/SteamOS#2055); this one never matches a disk on another bus
        # or a change or remove event, and the unit leaves a file system that is mounted
        # already (a system disk on USB) alone.
        #
        # udev mounts nothing itself: udevd runs with PrivateMounts=yes, so a mount made by a
        # RUN program stays in udevd's own namespace, invisible to everyone else
        # (guysoft/OctoPi#582). The rule only asks systemd for \(pkg)-media@KERNEL.service,
        # which mounts the stick read-only, runs `clientctl install --from` and unmounts it.
        #
        # To turn it off, mask this file with one of the same name in /etc/udev/rules.d
        # linking to /dev/null.
        ACTION=="add", SUBSYSTEM=="block", KERNEL=="sd*", \\
          ENV{ID_BUS}=="usb", ENV{ID_FS_USAGE}=="filesystem", ENV{ID_FS_TYPE}=="vfat|exfat|ext4", \\
          TAG+="systemd", ENV{SYSTEMD_WANTS}+="\(pkg)-media@%k.service"

        """
    }

    /// `/lib/systemd/system/PKG-media@.service`: `clientctl install --from` on a stick the
    /// udev rule found, as serve's dynamic user, without network, on a read-only mount the
    /// unit's privileged steps make and remove (docs/packaging.md lists what each setting
    /// takes away).
    var mediaUnit: String {
        let mount = mediaMountPoint
        let options = "ro,nosuid,nodev,noexec"
        return """
            [Unit]
            Description=\(request.name) update from removable media (%I)
            Documentation=man:\(pkg)(1)
            BindsTo=dev-%i.device
            After=dev-%i.device \(pkg)-serve.service
            ConditionPathExists=/var/lib/\(pkg)/config.json

            [Service]
            Type=oneshot
            ExecCondition=+/bin/sh -c '! /usr/bin/findmnt --source /dev/%I'
            ExecStartPre=-+/usr/bin/mount -t vfat,exfat -o \(options),fmask=0133,dmask=0022 /dev/%I \(mount)
            ExecStartPre=-+/usr/bin/mount -t ext4 -o \(options),noload /dev/%I \(mount)
            ExecStartPre=+/usr/bin/mountpoint -q \(mount)
            ExecStart=\(lib)/clientctl install --root /var/lib/\(pkg) --from \(mount) --wait 600
            ExecStopPost=-+/usr/bin/umount \(mount)
            ExecStopPost=-+/usr/bin/umount --lazy \(mount)
            TimeoutStartSec=15min
            DynamicUser=yes
            User=\(serviceUser)
            StateDirectory=\(pkg)
            StateDirectoryMode=0750
            RuntimeDirectory=\(pkg)-media/%i
            ReadOnlyPaths=\(mount)
            UMask=0027
            PrivateMounts=yes
            PrivateNetwork=yes
            IPAddressDeny=any
            \(sandbox(addressFamilies: "AF_UNIX"))

            """
    }

    /// The sandbox both system units share (docs/packaging.md lists what each setting takes
    /// away): no capabilities, a private /tmp, devices and users, a read-only system, no
    /// kernel tunables, modules, logs or clock, only `addressFamilies`, the
    /// `@system-service` system calls without `@privileged`. One line per setting.
    func sandbox(addressFamilies: String) -> String {
        [
            "CapabilityBoundingSet=", "AmbientCapabilities=", "NoNewPrivileges=yes", "PrivateTmp=yes", "PrivateDevices=yes",
            "PrivateUsers=yes", "DevicePolicy=closed", "ProtectSystem=strict", "ProtectHome=yes", "ProtectProc=invisible",
            "ProcSubset=pid", "ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectKernelLogs=yes",
            "ProtectControlGroups=yes", "ProtectClock=yes", "ProtectHostname=yes", "RestrictAddressFamilies=\(addressFamilies)",
            "RestrictNamespaces=yes", "RestrictRealtime=yes", "RestrictSUIDSGID=yes", "LockPersonality=yes",
            "MemoryDenyWriteExecute=yes", "RemoveIPC=yes", "KeyringMode=private", "SystemCallArchitectures=native",
            "SystemCallFilter=@system-service", "SystemCallFilter=~@privileged", "SystemCallErrorNumber=EPERM",
        ].joined(separator: "\n")
    }

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

    /// `/usr/share/keyrings/PKG-archive-keyring.gpg`: the apt repository's key, binary, read
    /// by apt for this package's source only (`Signed-By:`).
    var keyringPath: String { "/usr/share/keyrings/\(pkg)-archive-keyring.gpg" }
    /// `/etc/apt/sources.list.d/PKG.sources`: a conffile.
    var sourcesPath: String { "/etc/apt/sources.list.d/\(pkg).sources" }

    /// The package's apt source (deb822, sources.list(5)): its repository and suite, trusted
    /// with its own keyring only, never a key apt trusts for every source.
    func aptSources(_ source: AptSource) -> String {
        """
        # \(request.name) (\(request.app)): updates of the app through apt, from the \(source.suite)
        # suite, signed by the key in \(keyringPath) (clientctl package).
        Types: deb
        URIs: \(source.url)
        Suites: \(source.suite)
        Components: main
        Signed-By: \(keyringPath)

        """
    }

    /// The control field `clientctl repo add` looks for: the path of the package's device
    /// template (`/usr/share/PKG/device-template.json`).
    static let templateField = "X-Clientctl-Template"

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
