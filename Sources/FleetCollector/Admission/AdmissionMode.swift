/// Which devices' reports count (`clientctl collect --admission`,
/// docs/fleet-reports.md#admission).
public enum AdmissionMode: String, Sendable, CaseIterable, Codable {
    /// Every device counts: a key is bound to its device id on first sight; devices made
    /// before device keys (unsigned batches) count while their id is bound to no key.
    case open
    /// Only the keys an operator listed (`clientctl fleet admit KEY…`, or `--admit-file`)
    /// count; the reports of any other key are held apart until it is listed.
    case listed
    /// A new key waits as pending until an operator admits it (`clientctl fleet admit`);
    /// its reports are held apart until then.
    case manual
}

/// Where a device stands with a collector (`clientctl fleet devices`).
public enum DeviceStatus: String, Sendable, CaseIterable, Codable {
    /// Its reports count.
    case accepted
    /// Its reports are held apart, counted, never in a summary, until it is admitted.
    case pending
    /// Its batches are refused (403).
    case rejected
}

/// What the collector did with a batch as far as admission goes.
public enum AdmissionVerdict: Sendable, Equatable {
    /// Stored with the fleet's reports.
    case accepted
    /// Stored apart: the device is not admitted (yet).
    case held
    /// Nothing stored.
    case refused(AdmissionRefusal)
}

/// Why a batch was refused for who sent it; every case stores nothing.
public struct AdmissionRefusal: Sendable, Equatable, Error {
    /// The reason, as the metrics name it.
    public enum Reason: String, Sendable, CaseIterable {
        /// Signed by another key than the one bound to its device id (409).
        case keyMismatch = "key-mismatch"
        /// Signed by a key that already speaks for another device id (409): one key, one device.
        case keyBound = "key-bound"
        /// Signed by a device's key for another app than the one it was bound with (409).
        case appMismatch = "app-mismatch"
        /// Unsigned, for a device id bound to a key (409).
        case unsignedBound = "unsigned-bound"
        /// Unsigned, and admission is not `open` (403).
        case unsigned
        /// The device was rejected by an operator (403).
        case rejected
        /// The device, not admitted, has as many reports held as it may (429).
        case heldFull = "held-full"
    }

    /// The reason.
    public var reason: Reason
    /// One line for the device.
    public var message: String

    /// A refusal.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}
