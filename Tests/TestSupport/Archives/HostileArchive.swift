import Foundation

/// A tiny raw tar (ustar, pax, GNU long name), zip and gzip writer for tests, able to
/// write what libarchive's writer refuses to make: `../` names, links, devices, NUL
/// bytes in names, duplicate entries, bad CRCs, mismatched zip names, nested gzip.
public enum HostileArchive {
    // MARK: tar

    /// How a tar entry's name is stored.
    public enum NameStyle: Sendable {
        /// In the 100-byte ustar name field (cut at 100 bytes), as raw bytes.
        case field
        /// In a pax `path` record, with `fieldName` in the ustar name field.
        case pax(fieldName: [UInt8])
        /// In a GNU `././@LongLink` entry of type `L`.
        case gnuLongName
    }

    /// One tar entry.
    public struct TarEntry: Sendable {
        public var name: [UInt8]
        public var type: UInt8
        public var data: [UInt8]
        public var mode: UInt32
        public var linkName: [UInt8]
        public var nameStyle: NameStyle
        /// The size written in the header, when it must lie about `data`.
        public var declaredSize: Int?

        public init(
            name: [UInt8], type: UInt8, data: [UInt8] = [], mode: UInt32 = 0o644, linkName: [UInt8] = [],
            nameStyle: NameStyle = .field, declaredSize: Int? = nil
        ) {
            self.name = name
            self.type = type
            self.data = data
            self.mode = mode
            self.linkName = linkName
            self.nameStyle = nameStyle
            self.declaredSize = declaredSize
        }

        /// A regular file.
        public static func file(_ name: String, _ text: String = "", mode: UInt32 = 0o644) -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "0"), data: Array(text.utf8), mode: mode)
        }
        /// A regular file with a raw name.
        public static func file(raw name: [UInt8], _ text: String = "") -> TarEntry {
            TarEntry(name: name, type: UInt8(ascii: "0"), data: Array(text.utf8))
        }
        /// A folder.
        public static func directory(_ name: String) -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "5"), mode: 0o755)
        }
        /// A symbolic link to `target`.
        public static func symlink(_ name: String, to target: String) -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "2"), mode: 0o777, linkName: Array(target.utf8))
        }
        /// A hard link to `target`, optionally carrying data (pax allows it; libarchive writes it).
        public static func hardlink(_ name: String, to target: String, data: String = "") -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "1"), data: Array(data.utf8), linkName: Array(target.utf8))
        }
        /// A character device node.
        public static func characterDevice(_ name: String) -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "3"), mode: 0o666)
        }
        /// A fifo.
        public static func fifo(_ name: String) -> TarEntry {
            TarEntry(name: Array(name.utf8), type: UInt8(ascii: "6"), mode: 0o644)
        }
    }

    /// A tar stream of `entries`, ending with the two zero blocks unless `endMarker` is false.
    public static func tar(_ entries: [TarEntry], endMarker: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries {
            var fieldName = entry.name
            switch entry.nameStyle {
            case .field: break
            case .pax(let name):
                fieldName = name
                let record = paxRecord("path", entry.name)
                out += header(name: Array("PaxHeaders/x".utf8), type: UInt8(ascii: "x"), size: record.count, mode: 0o644, link: [])
                out += padded(record)
            case .gnuLongName:
                fieldName = Array(entry.name.prefix(99))
                let data = entry.name + [0]
                out += header(name: Array("././@LongLink".utf8), type: UInt8(ascii: "L"), size: data.count, mode: 0o644, link: [])
                out += padded(data)
            }
            out += header(
                name: fieldName, type: entry.type, size: entry.declaredSize ?? entry.data.count, mode: entry.mode,
                link: entry.linkName)
            out += padded(entry.data)
        }
        if endMarker { out += [UInt8](repeating: 0, count: 1024) }
        return out
    }

    /// A 512-byte ustar header.
    public static func header(name: [UInt8], type: UInt8, size: Int, mode: UInt32, link: [UInt8]) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], _ offset: Int, _ length: Int) {
            for (i, byte) in bytes.prefix(length).enumerated() { block[offset + i] = byte }
        }
        func octal(_ value: Int, _ offset: Int, _ length: Int) {
            let digits = String(value, radix: 8)
            put(Array((String(repeating: "0", count: max(0, length - 1 - digits.count)) + digits).utf8), offset, length - 1)
        }
        put(name, 0, 100)
        octal(Int(mode), 100, 8)
        octal(0, 108, 8)
        octal(0, 116, 8)
        octal(size, 124, 12)
        octal(1_700_000_000, 136, 12)
        block[156] = type
        put(link, 157, 100)
        put(Array("ustar\0".utf8), 257, 6)
        put(Array("00".utf8), 263, 2)
        put(Array("root".utf8), 265, 32)
        put(Array("root".utf8), 297, 32)
        for i in 148..<156 { block[i] = 0x20 }
        let sum = block.reduce(0) { $0 + Int($1) }
        let digits = String(sum, radix: 8)
        put(Array((String(repeating: "0", count: 6 - digits.count) + digits).utf8) + [0, 0x20], 148, 8)
        return block
    }

    /// A pax record `"<len> key=value\n"`.
    public static func paxRecord(_ key: String, _ value: [UInt8]) -> [UInt8] {
        let body = Array(" \(key)=".utf8) + value + [0x0A]
        var length = body.count + 1
        while String(length).count + body.count != length { length = String(length).count + body.count }
        return Array(String(length).utf8) + body
    }

    private static func padded(_ data: [UInt8]) -> [UInt8] {
        data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
}
