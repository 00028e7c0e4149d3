/// Pure selection and staging rules shared by both channels (docs/watchdog.md#selection).
import ClientFoundation
package enum Selection {
    /// The archive channel's seed rule: of the installed versions that are compatible
    /// with the shell and not blacklisted, the highest by SemVer precedence; `nil` means
    /// the embedded seed. Versions whose id is not SemVer are ignored.
    package static func highestCompatible(
        _ installed: [InstalledVersion], shell: Version,
        blacklist: [String]
    ) -> InstalledVersion? {
        installed
            .filter { !$0.isEmbedded && $0.isCompatible(withShell: shell) && !blacklist.contains($0.id) }
            .compactMap { v in Version(v.id).map { (v, $0) } }
            .max { $0.1 < $1.1 }?.0
    }

    /// Stages `id` as the pending version: the switch happens on reload or next start.
    /// Staging the version that already runs clears `pending` instead.
    package static func stage(_ id: String, in state: inout DeviceState) {
        state.pending = (id == state.current) ? nil : id
    }
}
