import DeviceIdentity
import FleetReports
import Foundation
import SignedManifest

/// A device's key in the collector's tests: signs batches as `clientctl` devices do (Ed25519
/// over the exact JSON, the signature in `Clientctl-Signature` as hex).
struct DeviceSigner {
    let key: Ed25519.PrivateKey
    let stream: String

    init(stream: String = "0000000000000001") throws {
        key = try Ed25519.PrivateKey.generate()
        self.stream = stream
    }

    /// The public key as a batch names it: 64 lowercase hex digits.
    var publicKey: String { Self.hex(key.publicKey.rawRepresentation) }

    /// The public key as a ``DevicePublicKey``.
    var devicePublicKey: DevicePublicKey {
        guard let typed = DevicePublicKey(raw: key.publicKey.rawRepresentation) else { preconditionFailure("an Ed25519 key is 32 bytes") }
        return typed
    }

    /// `batch` as schema 2 with this key and stream: its bytes and the signature header.
    func signed(_ batch: ReportBatch, stream: String? = nil) throws -> (body: Data, headers: [String]) {
        var b = batch
        b.key = devicePublicKey
        b.stream = stream ?? self.stream
        let body = b.encoded()
        return (body, ["\(ReportBatch.signatureHeader): " + Self.hex(try key.signature(for: Array(body)))])
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
