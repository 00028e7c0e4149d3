import ClientFoundation
import Foundation

/// The systemd units a package carries: the kiosk session (a user unit), the headless
/// agent (`PKG-serve.service`), the user both system units run as and the sandbox they
/// share (docs/packaging.md).
extension PackageTexts {
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
}
