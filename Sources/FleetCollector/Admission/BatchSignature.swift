import ClientFoundation
import FleetReports
import Foundation
import HTTPTypes
import SignedManifest

/// The signature of a schema-2 batch (docs/fleet-reports.md#device-keys): Ed25519 by the
/// key the batch names, over the exact JSON bytes (after decompression), in the
/// `Clientctl-Signature` header as 128 lowercase hex digits. A schema-1 batch carries none.
enum BatchSignature {
    /// The header's name.
    static let headerName = HTTPField.Name(ReportBatch.signatureHeader) ?? .authorization

    /// Why `batch` (read from `body`) is not signed by its key, or nil when it is (or is a
    /// schema-1 batch, which admission judges).
    static func refusal(of batch: ReportBatch, body: [UInt8], header: String?) -> String? {
        guard let key = batch.key else {
            return header == nil ? nil : "\(ReportBatch.signatureHeader) on a schema-1 batch: a signed batch names its key (schema 2)"
        }
        guard let header else { return "no \(ReportBatch.signatureHeader) header: a schema-2 batch is signed by its device's key" }
        guard let signature = LowerHex.decode(header.trimmingCharacters(in: .whitespaces)), signature.count == Ed25519.signatureLength else {
            return "\(ReportBatch.signatureHeader): not \(Ed25519.signatureLength * 2) hex digits"
        }
        return Ed25519.isValidSignature(signature, for: body, rawPublicKey: key.raw) ? nil : "the signature does not match the batch and its key"
    }
}
