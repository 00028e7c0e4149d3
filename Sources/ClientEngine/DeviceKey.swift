import ClientFoundation
import ClientUpdater
import DeviceIdentity
import Foundation
import SignedManifest

/// `<root>/device-key.pem`: the device's Ed25519 key, made once at `init` (or at the first
/// report of a root made before device keys), mode 0600, never read by anyone but the
/// root's own processes (docs/fleet-reports.md#device-keys). Every report batch is signed
/// with it; a collector binds the device id to its public key on first sight.
package struct DeviceKey: ReportSigner {
    /// The private key, PEM (PKCS #8).
    private let pem: String
    /// The public key.
    package let publicKey: DevicePublicKey

    /// The root's key, made (atomically, mode 0600) when it has none. Two processes that
    /// make one at once keep the first: the file is linked into place, never replaced.
    /// - Throws: ``EngineError`` when the key cannot be read, made or written.
    package static func readOrCreate(_ layout: RootLayout) throws -> DeviceKey {
        if let key = try read(layout) {
            key.recordPublicKey(layout)
            return key
        }
        let made: Ed25519.PrivateKey
        let pem: String
        do {
            made = try Ed25519.PrivateKey.generate()
            pem = try made.pemRepresentation()
        } catch {
            throw EngineError(.deviceKey, "cannot make a device key: \(error)")
        }
        let temporary = layout.deviceKey + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try AtomicFile.write(Data(pem.utf8), to: temporary, mode: 0o600)
        } catch {
            throw EngineError(.deviceKey, "cannot write \(temporary): \(error)")
        }
        defer { unlink(temporary) }
        if link(temporary, layout.deviceKey) != 0, errno != EEXIST {
            throw EngineError(.deviceKey, "cannot place \(layout.deviceKey): \(String(cString: strerror(errno)))")
        }
        try? AtomicFile.syncDirectory(layout.root)
        guard let key = try read(layout) else { throw EngineError(.deviceKey, "\(layout.deviceKey) vanished as it was made") }
        key.recordPublicKey(layout)
        return key
    }

    /// The root's key, or nil when it has none.
    /// - Throws: ``EngineError`` when the file is there but is no Ed25519 private key, or is
    ///   open to others than its owner.
    package static func read(_ layout: RootLayout) throws -> DeviceKey? {
        var info = stat()
        guard lstat(layout.deviceKey, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFREG else { throw EngineError(.deviceKey, "\(layout.deviceKey) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw EngineError(
                .deviceKey, "\(layout.deviceKey) has mode \(String(info.st_mode & 0o777, radix: 8)): a device key is for its owner alone (chmod 600)")
        }
        let key: Ed25519.PrivateKey
        let pem: String
        do {
            key = try Ed25519.PrivateKey(pemFile: layout.deviceKey)
            pem = try key.pemRepresentation()
        } catch {
            throw EngineError(.deviceKey, "\(layout.deviceKey): not an Ed25519 private key (\(error))")
        }
        guard let publicKey = DevicePublicKey(raw: key.publicKey.rawRepresentation) else {
            throw EngineError(.deviceKey, "\(layout.deviceKey): not an Ed25519 private key (its public key is not 32 bytes)")
        }
        return DeviceKey(pem: pem, publicKey: publicKey)
    }

    /// Writes `device-key.pub` when it does not hold this key (status reads it).
    func recordPublicKey(_ layout: RootLayout) {
        guard DeviceIdFile.readPublicKey(layout) != publicKey else { return }
        try? AtomicFile.write(Data((publicKey.hex + "\n").utf8), to: layout.deviceKeyPublic)
    }

    package func sign(_ message: [UInt8]) throws -> [UInt8] {
        try Ed25519.PrivateKey(pem: pem, source: "device key").signature(for: message)
    }
}

extension RootLayout {
    /// `device-key.pem`: the device's report-signing key (mode 0600).
    package var deviceKey: String { root + "/device-key.pem" }
}
