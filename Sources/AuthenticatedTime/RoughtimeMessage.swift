/// A Roughtime tag: four ASCII bytes read as a little-endian `UInt32` (RFC 10049 §5.1).
package struct RoughtimeTag: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The tag as it is on the wire (little-endian), so `"SIG\0"` is `0x00474953`.
    package let rawValue: UInt32

    /// A tag from its wire value.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A tag from its name, padded with zero bytes to four (`"SIG"` is `SIG\0`).
    init(_ name: StaticString) {
        var value: UInt32 = 0
        name.withUTF8Buffer { bytes in
            for (i, byte) in bytes.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(i)) }
        }
        rawValue = value
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The tag's letters (`SIG`), or its hex value when they are not printable.
    package var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
        let name = bytes.reversed().drop { $0 == 0 }.reversed()
        guard !name.isEmpty, name.allSatisfy({ (0x20...0x7e).contains($0) }) else {
            return "0x" + String(rawValue, radix: 16)
        }
        return String(decoding: Array(name), as: UTF8.self)
    }

    static let sig = Self("SIG")
    static let ver = Self("VER")
    static let srv = Self("SRV")
    static let nonc = Self("NONC")
    static let dele = Self("DELE")
    static let type = Self("TYPE")
    static let path = Self("PATH")
    static let radi = Self("RADI")
    static let pubk = Self("PUBK")
    static let midp = Self("MIDP")
    static let srep = Self("SREP")
    static let vers = Self("VERS")
    static let mint = Self("MINT")
    static let root = Self("ROOT")
    static let cert = Self("CERT")
    static let maxt = Self("MAXT")
    static let indx = Self("INDX")
    static let zzzz = Self("ZZZZ")
}

/// A Roughtime message: tag–value pairs with strictly ascending tags (RFC 10049 §5.1).
///
/// ``parse(_:what:)`` is strict: every offset, length and order the RFC states is checked
/// and any violation is an error naming the message and what is wrong, never a crash.
package struct RoughtimeMessage: Sendable, Hashable {
    /// One tag and its value.
    package struct Field: Sendable, Hashable {
        /// The tag.
        package var tag: RoughtimeTag
        /// Its value: a multiple of 4 bytes.
        package var value: [UInt8]

        /// A field.
        package init(tag: RoughtimeTag, value: [UInt8]) {
            self.tag = tag
            self.value = value
        }
    }

    /// The fields, in ascending tag order.
    package private(set) var fields: [Field]

    /// A message of `fields`, sorted by tag. Values must be multiples of 4 bytes and tags
    /// distinct (the request builder and the tests' vectors keep to that).
    package init(_ fields: [Field]) {
        self.fields = fields.sorted { $0.tag < $1.tag }
    }

    /// The value of `tag`, or nil.
    package func value(_ tag: RoughtimeTag) -> [UInt8]? {
        fields.first { $0.tag == tag }?.value
    }

    /// The value of `tag`; its absence is a ``AuthenticatedTimeErrorCode/malformed`` error
    /// naming `what`.
    func require(_ tag: RoughtimeTag, in what: String) throws -> [UInt8] {
        guard let value = value(tag) else { throw AuthenticatedTimeError(.malformed, "\(what): no \(tag) tag") }
        return value
    }

    /// The value of `tag` as a little-endian `UInt32` (exactly 4 bytes).
    func uint32(_ tag: RoughtimeTag, in what: String) throws -> UInt32 {
        let bytes = try require(tag, in: what)
        guard bytes.count == 4 else { throw AuthenticatedTimeError(.malformed, "\(what).\(tag): \(bytes.count) bytes, expected 4") }
        return Wire.uint32(bytes, at: 0)
    }

    /// The value of `tag` as a little-endian `UInt64` (exactly 8 bytes).
    func uint64(_ tag: RoughtimeTag, in what: String) throws -> UInt64 {
        let bytes = try require(tag, in: what)
        guard bytes.count == 8 else { throw AuthenticatedTimeError(.malformed, "\(what).\(tag): \(bytes.count) bytes, expected 8") }
        return UInt64(Wire.uint32(bytes, at: 0)) | UInt64(Wire.uint32(bytes, at: 4)) << 32
    }

    /// The wire encoding: the pair count, the offsets of values 1…N−1, the tags, the values.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + 8 * fields.count + fields.reduce(0) { $0 + $1.value.count })
        Wire.append(UInt32(fields.count), to: &out)
        var offset = 0
        for field in fields.dropLast() {
            offset += field.value.count
            Wire.append(UInt32(offset), to: &out)
        }
        for field in fields { Wire.append(field.tag.rawValue, to: &out) }
        for field in fields { out += field.value }
        return out
    }

    /// Parses a message strictly; `what` names it in errors (`response`, `SREP`, `CERT.DELE`).
    ///
    /// Checked: at least the pair count and the header it announces; a length that is a
    /// multiple of 4; offsets that are multiples of 4, non-decreasing and inside the values;
    /// tags strictly ascending. A message of zero pairs is an error (every message the RFC
    /// defines has fields).
    package static func parse(_ bytes: [UInt8], what: String) throws -> RoughtimeMessage {
        guard bytes.count >= 4 else {
            throw AuthenticatedTimeError(.malformed, "\(what): \(bytes.count) bytes, too short for a tag count")
        }
        guard bytes.count % 4 == 0 else {
            throw AuthenticatedTimeError(.malformed, "\(what): \(bytes.count) bytes, not a multiple of 4")
        }
        let count = Int(Wire.uint32(bytes, at: 0))
        guard count > 0 else { throw AuthenticatedTimeError(.malformed, "\(what): zero tags") }
        // The count, an offset per pair but the first, a tag per pair: 8 × count bytes (no overflow: count < 2³²).
        let header = 8 * count
        guard header <= bytes.count else {
            throw AuthenticatedTimeError(.malformed, "\(what): \(count) tags need a \(header)-byte header, message is \(bytes.count) bytes")
        }
        let valuesLength = bytes.count - header
        var offsets = [0]
        for i in 0..<(count - 1) {
            let offset = Int(Wire.uint32(bytes, at: 4 + 4 * i))
            guard offset % 4 == 0 else {
                throw AuthenticatedTimeError(.malformed, "\(what): offset \(offset) of value \(i + 1) is not a multiple of 4")
            }
            guard offset >= offsets[offsets.count - 1] else {
                throw AuthenticatedTimeError(.malformed, "\(what): offset \(offset) of value \(i + 1) is before the previous one")
            }
            guard offset <= valuesLength else {
                throw AuthenticatedTimeError(.malformed, "\(what): offset \(offset) of value \(i + 1) is past the \(valuesLength) bytes of values")
            }
            offsets.append(offset)
        }
        offsets.append(valuesLength)
        var fields: [Field] = []
        fields.reserveCapacity(count)
        let tagsStart = 4 + 4 * (count - 1)
        for i in 0..<count {
            let tag = RoughtimeTag(rawValue: Wire.uint32(bytes, at: tagsStart + 4 * i))
            if let previous = fields.last, tag <= previous.tag {
                throw AuthenticatedTimeError(.malformed, "\(what): tag \(tag) follows \(previous.tag); tags must be strictly ascending")
            }
            fields.append(Field(tag: tag, value: Array(bytes[(header + offsets[i])..<(header + offsets[i + 1])])))
        }
        return RoughtimeMessage(parsed: fields)
    }

    private init(parsed: [Field]) { fields = parsed }
}

/// The framing of a Roughtime packet (RFC 10049 §5.2): `ROUGHTIM`, the message length as a
/// little-endian `UInt32`, the message.
package enum RoughtimePacket {
    /// The 8 bytes every packet starts with.
    package static let magic: [UInt8] = Array("ROUGHTIM".utf8)
    /// Size of the magic and the length.
    package static let headerSize = 12

    /// `message` framed as a packet.
    package static func frame(_ message: [UInt8]) -> [UInt8] {
        var out = magic
        Wire.append(UInt32(message.count), to: &out)
        return out + message
    }

    /// The message inside `packet`, checking the magic and that the length is exact.
    package static func unframe(_ packet: [UInt8], what: String) throws -> [UInt8] {
        guard packet.count >= headerSize else {
            throw AuthenticatedTimeError(.malformed, "\(what): \(packet.count) bytes, too short for the ROUGHTIM header")
        }
        guard Array(packet[0..<8]) == magic else {
            throw AuthenticatedTimeError(.malformed, "\(what): does not start with ROUGHTIM")
        }
        let length = Int(Wire.uint32(packet, at: 8))
        guard length == packet.count - headerSize else {
            throw AuthenticatedTimeError(.malformed, "\(what): header announces \(length) bytes of message, packet has \(packet.count - headerSize)")
        }
        return Array(packet[headerSize...])
    }
}

/// Little-endian integers on byte arrays (bounds checked by the callers).
enum Wire {
    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    static func append(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    static func bytes(_ value: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    static func bytes(_ value: UInt64) -> [UInt8] {
        bytes(UInt32(truncatingIfNeeded: value)) + bytes(UInt32(truncatingIfNeeded: value >> 32))
    }
}
