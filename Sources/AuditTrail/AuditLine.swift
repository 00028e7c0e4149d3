import ClientFoundation
import Foundation
import StrictJSON

/// One line of the trail as JSON: the fields of docs/audit-trail.md, the bytes it is
/// written as, the bytes its signature covers, and the reading back.
enum AuditLine {
    /// The SHA-256 that stands for "no previous line" in the first entry.
    static let noPrevious = String(repeating: "0", count: 64)

    /// The object of `entry` without `signature`: what the signature covers.
    static func unsigned(seq: Int, record: AuditRecord, previous: String, keyId: String) -> JSONObject {
        var o = JSONObject()
        o["seq"] = .integer(Int64(seq))
        o["time"] = .string(RFC3339.format(record.time))
        o["operator"] = .string(record.operatorName)
        o["address"] = .string(record.address)
        o["act"] = .string(record.act)
        o["target"] = .string(record.target)
        o["before"] = .string(record.before)
        o["after"] = .string(record.after)
        o["result"] = .string(record.result)
        o["previous"] = .string(previous)
        o["key"] = .string(keyId)
        return o
    }

    /// The line's bytes (canonical JSON, no newline).
    static func bytes(_ unsigned: JSONObject, signature: [UInt8]) -> [UInt8] {
        var o = unsigned
        o["signature"] = .string(Data(signature).base64EncodedString())
        return CanonicalJSON.serialize(o)
    }

    /// Lowercase hex SHA-256 of a line's bytes (without its newline): the next entry's
    /// `previous`, and the trail's head.
    static func hash(_ line: some Collection<UInt8>) -> String {
        Digest.hex(.sha256, of: Array(line))
    }

    /// A parsed line: the entry, and the bytes its signature covers.
    struct Parsed {
        let entry: AuditEntry
        let signed: [UInt8]
    }

    /// Why a line is not an entry.
    struct Problem: Error {
        let reason: String
    }

    /// Reads one line (without its newline): canonical JSON of an object with every field
    /// of the format, each of its type.
    static func parse(_ line: [UInt8]) throws(Problem) -> Parsed {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(line, limits: .init(maxBytes: AuditTrail.maxLineBytes, maxDepth: 4), source: "the line")
        } catch {
            throw Problem(reason: "it is not JSON (\(Self.describe(error)))")
        }
        guard CanonicalJSON.serialize(object) == line else { throw Problem(reason: "it is not in canonical JSON form") }
        func string(_ name: String) throws(Problem) -> String {
            guard let value = object[name] else { throw Problem(reason: "it has no \(name)") }
            guard case .string(let s) = value else { throw Problem(reason: "its \(name) is \(value.typeName), not a string") }
            return s
        }
        guard case .integer(let seq)? = object["seq"], seq >= 1 else { throw Problem(reason: "its seq is not a number from 1") }
        let timeText = try string("time")
        guard let time = RFC3339.parse(timeText), RFC3339.format(time) == timeText else {
            throw Problem(reason: "its time is not an RFC 3339 UTC time in whole seconds")
        }
        let previous = try string("previous")
        guard previous.utf8.count == 64, previous.utf8.allSatisfy(isLowerHex) else {
            throw Problem(reason: "its previous is not 64 lowercase hex digits")
        }
        let keyId = try string("key")
        guard keyId.utf8.count == 16, keyId.utf8.allSatisfy(isLowerHex) else {
            throw Problem(reason: "its key is not a key id (16 lowercase hex digits)")
        }
        let signatureText = try string("signature")
        guard let signature = Data(base64Encoded: signatureText), signature.count == 64, signature.base64EncodedString() == signatureText else {
            throw Problem(reason: "its signature is not the base64 of 64 bytes")
        }
        let record = AuditRecord(
            time: time, operatorName: try string("operator"), address: try string("address"), act: try string("act"),
            target: try string("target"), before: try string("before"), after: try string("after"), result: try string("result"))
        var unsigned = object
        unsigned.removeValue(forKey: "signature")
        return Parsed(
            entry: AuditEntry(seq: Int(seq), record: record, previous: previous, keyId: keyId, signature: Array(signature)),
            signed: CanonicalJSON.serialize(unsigned))
    }

    static func isLowerHex(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x61...0x66).contains(b) }

    /// The message of a parse error, without the source it names.
    private static func describe(_ error: any Error) -> String {
        if let e = error as? StrictJSONError, let p = e.underlying as? StrictJSON.ParseError { return p.description }
        return "\(error)"
    }

    /// `text` cut to at most `max` UTF-8 bytes on a character boundary, with a note of
    /// what was cut; as it is when it fits.
    static func clipped(_ text: String, max: Int) -> String {
        let total = text.utf8.count
        guard total > max else { return text }
        let note = " … (cut: \(total) bytes)"
        var kept = ""
        var used = 0
        for character in text {
            let n = character.utf8.count
            guard used + n + note.utf8.count <= max else { break }
            kept.append(character)
            used += n
        }
        return kept + note
    }
}
