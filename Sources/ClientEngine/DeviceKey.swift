import ClientFoundation
import ClientUpdater
import DeviceIdentity
import Foundation
import SignedManifest

/// The device's Ed25519 key, made once at `init` (or at the first report of a root made
/// before device keys), never read by anyone but the root's own processes
/// (docs/fleet-reports.md#device-keys). Every report batch is signed with it; a collector
/// binds the device id to its public key on first sight. Its files are ClientUpdater's
/// (``DeviceKeyFile``, beside the id's); this makes the key and signs with it.
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
            DeviceKeyFile.recordPublic(key.publicKey, layout)
            return key
        }
        let pem: String
        do {
            pem = try Ed25519.PrivateKey.generate().pemRepresentation()
        } catch {
            throw EngineError(.deviceKey, "cannot make a device key: \(error)")
        }
        do {
            try DeviceKeyFile.placePrivate(pem, layout)
        } catch let error as UpdaterError {
            throw EngineError(.deviceKey, error.message)
        }
        guard let key = try read(layout) else { throw EngineError(.deviceKey, "\(layout.deviceKey) vanished as it was made") }
        DeviceKeyFile.recordPublic(key.publicKey, layout)
        return key
    }

    /// The root's key, or nil when it has none.
    /// - Throws: ``EngineError`` when the file is there but is no Ed25519 private key, or is
    ///   open to others than its owner.
    package static func read(_ layout: RootLayout) throws -> DeviceKey? {
        let text: String
        do {
            guard let read = try DeviceKeyFile.readPrivate(layout) else { return nil }
            text = read
        } catch let error as UpdaterError where error.code == .corruptState {
            throw EngineError(.deviceKey, error.message)
        } catch {
            throw EngineError(.deviceKey, "\(layout.deviceKey): not an Ed25519 private key (\(error))")
        }
        let key: Ed25519.PrivateKey
        let pem: String
        do {
            key = try Ed25519.PrivateKey(pem: text, source: layout.deviceKey)
            pem = try key.pemRepresentation()
        } catch {
            throw EngineError(.deviceKey, "\(layout.deviceKey): not an Ed25519 private key (\(error))")
        }
        guard let publicKey = DevicePublicKey(raw: key.publicKey.rawRepresentation) else {
            throw EngineError(.deviceKey, "\(layout.deviceKey): not an Ed25519 private key (its public key is not 32 bytes)")
        }
        return DeviceKey(pem: pem, publicKey: publicKey)
    }

    package func sign(_ message: [UInt8]) throws -> [UInt8] {
        try Ed25519.PrivateKey(pem: pem, source: "device key").signature(for: message)
    }
}
