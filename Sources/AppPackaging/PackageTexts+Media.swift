import Foundation

/// Updates from removable media (docs/packaging.md#updates-from-removable-media): the udev
/// rule that notices a USB stick and the systemd template unit it starts.
extension PackageTexts {
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
}
