import ClientFoundation
import Foundation
import SignedManifest

/// Reads the keys a device is told to trust (`init --trust`).
package enum TrustedKeys {
    /// Reads a PEM file, checks it is an Ed25519 public key, and returns its PEM text as
    /// config.json stores it.
    /// - Throws: ``DeviceSetupError`` naming the file: missing, unreadable, or not an Ed25519
    ///   SubjectPublicKeyInfo key.
    package static func readPublicKeyPEM(_ path: String) throws -> String {
        let read: Data?
        do {
            read = try BoundedFile.read(path, cap: 16 * 1024, code: DeviceSetupError.Code.invalidArgument)
        } catch {
            throw DeviceSetupError.field("trustFiles", error.message)
        }
        guard let data = read else {
            throw DeviceSetupError.field(.notFound, "trustFiles", "\(path): no such file or not readable")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw DeviceSetupError.field("trustFiles", "\(path): not a PEM text file")
        }
        do {
            _ = try Ed25519.PublicKey(pem: text, source: path)
        } catch let error as SignedManifestError {
            throw DeviceSetupError.field("trustFiles", error.message)
        }
        return text
    }
}
