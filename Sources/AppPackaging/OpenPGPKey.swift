import Foundation

/// An OpenPGP key file read without gpg: ASCII armor taken off (RFC 4880 §6.2, CRC-24
/// checked) and its packets walked (§4.2), so `package --apt-key` ships the binary keyring
/// apt's `Signed-By:` reads, and never ships a secret key by mistake.
package struct OpenPGPKey: Sendable {
    /// The key's packets, binary (what `gpg --dearmor` writes).
    package let binary: Data
    /// The tags of its packets, in order (6 public key, 5 secret key, 13 user id, 2 signature…).
    package let tags: [UInt8]

    /// Packet tags of secret key material (secret key, secret subkey).
    static let secretTags: Set<UInt8> = [5, 7]

    /// Reads an armored (or binary) key file's bytes.
    /// - Throws: ``PackageError`` `.unusableKey` naming `label` when it is no OpenPGP key.
    package init(_ data: Data, label: String) throws {
        let bytes: Data
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN PGP ") {
            bytes = try Self.dearmor(text, label: label)
        } else {
            bytes = data
        }
        guard let tags = Self.packetTags(bytes), let first = tags.first, first == 5 || first == 6 else {
            throw PackageError(.unusableKey, "\(label) is not an OpenPGP key (no key packet)")
        }
        self.binary = bytes
        self.tags = tags
    }

    /// True when the file holds secret key material.
    package var hasSecretKey: Bool { tags.contains { Self.secretTags.contains($0) } }

    /// The bytes between the armor lines, without headers and checksum, base64-decoded.
    static func dearmor(_ text: String, label: String) throws -> Data {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN PGP ") }),
            let end = lines[begin...].firstIndex(where: { $0.hasPrefix("-----END PGP ") })
        else { throw PackageError(.unusableKey, "\(label): no complete OpenPGP armor") }
        var body = Array(lines[(begin + 1)..<end])
        // Armor headers (Version: …) end at the first empty line, when there are any.
        if body.contains(where: { $0.contains(": ") }), let blank = body.firstIndex(of: "") { body.removeSubrange(...blank) }
        var checksum: String?
        if let last = body.last(where: { !$0.isEmpty }), last.hasPrefix("=") {
            checksum = String(last.dropFirst())
            body.removeAll { $0 == last }
        }
        guard let data = Data(base64Encoded: body.joined()), !data.isEmpty else {
            throw PackageError(.unusableKey, "\(label): the armor is not base64")
        }
        if let checksum {
            let crc = Self.crc24(data)
            let expected = Data([UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]).base64EncodedString()
            guard expected == checksum else { throw PackageError(.unusableKey, "\(label): the armor's checksum does not match") }
        }
        return data
    }

    /// RFC 4880 §6.1.
    static func crc24(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xB7_04CE
        for byte in data {
            crc ^= UInt32(byte) << 16
            for _ in 0..<8 {
                crc <<= 1
                if crc & 0x100_0000 != 0 { crc ^= 0x186_4CFB }
            }
        }
        return crc & 0xFF_FFFF
    }

    /// The tag of every packet, or `nil` when the bytes are not a well-formed packet sequence.
    static func packetTags(_ data: Data) -> [UInt8]? {
        let bytes = [UInt8](data)
        var tags: [UInt8] = []
        var at = 0
        while at < bytes.count {
            let header = bytes[at]
            guard header & 0x80 != 0 else { return nil }
            var length = 0
            if header & 0x40 != 0 {  // new format
                tags.append(header & 0x3F)
                guard at + 1 < bytes.count else { return nil }
                let first = Int(bytes[at + 1])
                if first < 192 {
                    length = first
                    at += 2
                } else if first < 224 {
                    guard at + 2 < bytes.count else { return nil }
                    length = ((first - 192) << 8) + Int(bytes[at + 2]) + 192
                    at += 3
                } else if first == 255 {
                    guard at + 5 < bytes.count else { return nil }
                    length = bytes[(at + 2)...(at + 5)].reduce(0) { $0 << 8 | Int($1) }
                    at += 6
                } else {
                    return nil  // partial lengths: never in a key
                }
            } else {  // old format
                tags.append((header >> 2) & 0x0F)
                let size = [1, 2, 4][Int(header & 0x03) % 3]
                guard header & 0x03 != 3, at + size < bytes.count else { return nil }
                length = bytes[(at + 1)...(at + size)].reduce(0) { $0 << 8 | Int($1) }
                at += 1 + size
            }
            guard length >= 0, at + length <= bytes.count else { return nil }
            at += length
        }
        return tags.isEmpty ? nil : tags
    }
}
