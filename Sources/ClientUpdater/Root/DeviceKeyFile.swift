import ClientFoundation
import DeviceIdentity
import Foundation

/// The files of the device's key (docs/fleet-reports.md#device-keys): `<root>/device-key.pem`,
/// its Ed25519 private key (PKCS #8 PEM, mode 0600, never replaced once placed), and
/// `<root>/device-key.pub`, its public half as 64 lowercase hex digits for `status`. Read and
/// written here, beside the id's file (``DeviceIdFile``), and nowhere else: ClientEngine's
/// `DeviceKey` makes the key and signs with it, through these functions.
package enum DeviceKeyFile {
    /// The PEM text of the root's private key, or nil when the root has none.
    /// - Throws: ``UpdaterError`` `.corruptState` when the file is not a regular file or is open
    ///   to others than its owner, `.io` when it cannot be read.
    package static func readPrivate(_ layout: RootLayout) throws -> String? {
        let path = layout.deviceKey
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFREG else { throw UpdaterError(.corruptState, "\(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw UpdaterError(
                .corruptState, "\(path) has mode \(String(info.st_mode & 0o777, radix: 8)): a device key is for its owner alone (chmod 600)")
        }
        guard let data = try? BoundedFile.read(path, cap: 64 * 1024, code: UpdaterError.Code.io) else {
            throw UpdaterError(.io, "cannot read key file \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Places `pem` as the root's private key (mode 0600) unless the root has one: written
    /// beside it, then linked into place, so two processes that make a key at once keep the
    /// first and a key is never replaced.
    /// - Throws: ``UpdaterError`` `.io` when it cannot be written or linked.
    package static func placePrivate(_ pem: String, _ layout: RootLayout) throws {
        let temporary = layout.deviceKey + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try AtomicFile.write(Data(pem.utf8), to: temporary, mode: 0o600)
        } catch {
            throw UpdaterError(.io, "cannot write \(temporary): \(error)")
        }
        defer { unlink(temporary) }
        if link(temporary, layout.deviceKey) != 0, errno != EEXIST {
            throw UpdaterError(.io, "cannot place \(layout.deviceKey): \(String(cString: strerror(errno)))")
        }
        try? AtomicFile.syncDirectory(layout.root)
    }

    /// The device's public key as `device-key.pub` holds it, or nil (none, or not a key).
    package static func readPublic(_ layout: RootLayout) -> DevicePublicKey? {
        guard let data = try? BoundedFile.read(layout.deviceKeyPublic, cap: 256, code: UpdaterError.Code.corruptState) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return DevicePublicKey(hex: text)
    }

    /// Writes `device-key.pub` when it does not hold `key` (best effort: status reads it).
    package static func recordPublic(_ key: DevicePublicKey, _ layout: RootLayout) {
        guard readPublic(layout) != key else { return }
        try? AtomicFile.write(Data((key.hex + "\n").utf8), to: layout.deviceKeyPublic)
    }
}

extension RootLayout {
    /// `device-key.pem`: the device's report-signing key (mode 0600).
    package var deviceKey: String { root + "/device-key.pem" }
    /// `device-key.pub`: the public half of `device-key.pem`, as 64 hex digits (for status).
    package var deviceKeyPublic: String { root + "/device-key.pub" }
}
