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
        guard let signature = Hex.bytes(header.trimmingCharacters(in: .whitespaces)), signature.count == Ed25519.signatureLength else {
            return "\(ReportBatch.signatureHeader): not \(Ed25519.signatureLength * 2) hex digits"
        }
        guard let raw = Hex.bytes(key), raw.count == Ed25519.publicKeyLength else { return "key: not an Ed25519 public key" }
        return Ed25519.isValidSignature(signature, for: body, rawPublicKey: raw) ? nil : "the signature does not match the batch and its key"
    }
}

/// Lowercase hex.
enum Hex {
    /// The bytes of an even count of hex digits, or nil.
    static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}
