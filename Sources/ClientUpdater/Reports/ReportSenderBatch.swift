internal import CZstd
import DeviceIdentity
import DeviceSetup
import DeviceTargeting
import FleetReports
import Foundation

/// What a ``ReportSender`` reads from and marks: the device's ``ReportJournal``, or a test's.
package protocol ReportSource: Sendable {
    /// Reports not yet delivered, oldest first: at most `maxReports`, at most `maxBytes` of JSON.
    func pending(maxReports: Int, maxBytes: Int) -> [FleetReport]
    /// The collector took every report up to `seq`.
    func delivered(through seq: Int64, at: Date)
    /// A delivery attempt failed: when and why, one line.
    func deliveryFailed(at: Date, reason: String)
    /// The collector refused the reports up to `seq` too often: they leave and count as dropped.
    func dropped(_ count: Int, through seq: Int64, at: Date, reason: String)
    /// The journal's stream (schema-2 batches): made anew whenever its state was lost.
    func stream() -> String
    /// The device's labels now, read when a batch is made (the root's `config.json`); nil
    /// when they cannot be read now (the sender keeps those it read last).
    func labels() -> DeviceLabels?
}

extension ReportSource {
    /// No labels known: batches carry the labels read last, none at first.
    package func labels() -> DeviceLabels? { nil }
}

/// Signs batches with the device's key (docs/fleet-reports.md#device-keys): the host
/// injects it (``ReportSender``'s `signer`); a sender without one sends schema-1 batches.
package protocol ReportSigner: Sendable {
    /// The Ed25519 public key.
    var publicKey: DevicePublicKey { get }
    /// The signature of `message` (64 bytes).
    func sign(_ message: [UInt8]) throws -> [UInt8]
}

extension ReportJournal: ReportSource {
    /// The labels of the root's `config.json` as it is now (`clientctl label set` changes
    /// them under a running `serve`); nil when it does not read.
    package func labels() -> DeviceLabels? {
        try? DeviceConfig.load(layout).labels
    }
}

/// Who sends: the identity fields of every batch (docs/fleet-reports.md#a-batch).
package struct ReportIdentity: Sendable, Equatable {
    /// `<root>/device-id`.
    package var device: DeviceID
    package var app: String
    package var channel: String

    package init(device: DeviceID, app: String, channel: String) {
        self.device = device
        self.app = app
        self.channel = channel
    }
}

/// The bytes of one batch as they go on the wire.
package enum ReportSenderBatch {
    /// The most reports and JSON bytes taken from the journal for one batch: well inside
    /// `ReportBatch.maxReports` and `ReportBatch.maxBytes` (the envelope adds a little).
    package static let maxReports = 500
    package static let maxBytes = 200 * 1024
    /// The zstd level: batches are small; a low level is fast and compresses JSON well.
    static let level: Int32 = 6

    /// `body` compressed with zstd (one frame, its content size in the header, which
    /// `zstd -d` and a collector's decoder read).
    /// - Throws: ``UpdaterError`` `.internalError` when libzstd fails (it does not for a
    ///   buffer of this size).
    package static func zstd(_ body: Data) throws -> Data {
        let bound = ZSTD_compressBound(body.count)
        var out = Data(count: bound)
        let written = out.withUnsafeMutableBytes { dst in
            body.withUnsafeBytes { src in
                ZSTD_compress(dst.baseAddress, bound, src.baseAddress, src.count, level)
            }
        }
        guard ZSTD_isError(written) == 0 else {
            throw UpdaterError(.internalError, "zstd could not compress a report batch: \(String(cString: ZSTD_getErrorName(written)))")
        }
        out.count = written
        return out
    }
}
