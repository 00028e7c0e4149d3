import Foundation

/// What happened: one act on the fleet, or one attempt that was refused or failed, as the
/// audit trail keeps it (docs/audit-trail.md).
///
/// Every field but ``time`` is text as the actor gave it: an operator's name, a device's
/// label, a collector's message. The trail stores it as given (a field over
/// ``AuditTrail/maxFieldBytes`` is cut); JSON escapes its control characters and
/// `clientctl audit show` prints them visibly, so no field can drive a terminal.
public struct AuditRecord: Sendable, Hashable {
    /// When it happened, on the actor's wall clock; written RFC 3339 UTC, whole seconds.
    public var time: Date
    /// Who acted: the console's operator name, or the CLI's user (`$USER`, `--audit-operator`).
    public var operatorName: String
    /// Where from: the console client's address, or `cli@<hostname>` for the command line.
    public var address: String
    /// What was done or tried: `halt`, `lift`, `cap`, `admit`, `reject`, `login`, `publish`,
    /// `rollout-restrict`, … A refused attempt keeps the act it tried.
    public var act: String
    /// What it was done to: a channel's release (`stable 1.4.0`) or a device id.
    public var target: String
    /// The state before the act, short (`1.4.0 100%`); empty when there is none.
    public var before: String
    /// The state after the act (`1.4.0 paused`); equal to ``before`` when nothing changed.
    public var after: String
    /// `ok`, `refused: <why>` or `failed: <why>`.
    public var result: String

    /// A record of one act.
    public init(time: Date, operatorName: String, address: String, act: String, target: String, before: String, after: String, result: String) {
        self.time = time
        self.operatorName = operatorName
        self.address = address
        self.act = act
        self.target = target
        self.before = before
        self.after = after
        self.result = result
    }
}

/// One line of an audit trail: a record, its place in the chain, and its signature.
public struct AuditEntry: Sendable, Hashable {
    /// The entry's number, from 1; the line it is on.
    public let seq: Int
    /// What happened.
    public let record: AuditRecord
    /// Lowercase hex SHA-256 of the previous line's bytes (without its newline); 64 zeros
    /// for the first entry.
    public let previous: String
    /// The id of the key that signed the entry (docs/formats.md#keys-and-key-id).
    public let keyId: String
    /// The Ed25519 signature over the canonical JSON of the entry without `signature`.
    public let signature: [UInt8]

    /// An entry as read from a trail or made by ``AuditTrail/append(_:to:signer:)``.
    public init(seq: Int, record: AuditRecord, previous: String, keyId: String, signature: [UInt8]) {
        self.seq = seq
        self.record = record
        self.previous = previous
        self.keyId = keyId
        self.signature = signature
    }
}

extension AuditEntry {
    /// The lowercase hex SHA-256 of the entry's line (without its newline): the next
    /// entry's ``previous``, and the trail's head when this entry is the last. (For an entry
    /// read from a trail or made by ``AuditTrail/append(_:to:signer:)``.)
    public var lineHash: String {
        let unsigned = AuditLine.unsigned(seq: seq, record: record, previous: previous, keyId: keyId)
        return AuditLine.hash(AuditLine.bytes(unsigned, signature: signature))
    }
}

/// What ``AuditTrail/verify(_:trust:)`` found.
public enum AuditVerification: Sendable, Equatable {
    /// Every entry is whole, in order, chained and signed by a trusted key: how many there
    /// are and the SHA-256 of the last line (64 zeros for an empty trail), which an auditor
    /// compares with a copy to see entries cut off the end.
    case intact(entries: Int, head: String)
    /// The first entry that is not: its number (the line, counted from 1) and what is wrong.
    case broken(seq: Int, reason: String)
}
