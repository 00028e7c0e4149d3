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

        public init(name: [UInt8], type: UInt8, data: [UInt8] = [], mode: UInt32 = 0o644, linkName: [UInt8] = [],
                    nameStyle: NameStyle = .field, declaredSize: Int? = nil) {
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
            out += header(name: fieldName, type: entry.type, size: entry.declaredSize ?? entry.data.count, mode: entry.mode,
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

    // MARK: gzip

    /// One piece of a gzip payload: literal bytes, or a run of zeros that is never held in memory.
    public enum Chunk: Sendable {
        case bytes([UInt8])
        case zeros(Int)
    }

    /// A one-member gzip of `data`: DEFLATE with fixed Huffman codes and run-length
    /// matches, or stored blocks when `stored` (so a byte can be altered in place).
    public static func gzip(_ data: [UInt8], stored: Bool = false) -> [UInt8] {
        stored ? gzipStored(data) : gzip([.bytes(data)])
    }

    /// A one-member gzip of the concatenated chunks (runs of zeros cost ~1 bit per 258 bytes).
    public static func gzip(_ chunks: [Chunk]) -> [UInt8] {
        var bits = BitWriter()
        bits.write(1, 1)  // BFINAL
        bits.write(1, 2)  // fixed Huffman
        var crc = CRC()
        var length = 0
        var previous: UInt8?
        for chunk in chunks {
            switch chunk {
            case .bytes(let data):
                crc.update(data)
                length += data.count
                var i = 0
                while i < data.count {
                    var run = 0
                    if let previous, previous == data[i] {
                        while run < 258, i + run < data.count, data[i + run] == previous { run += 1 }
                    }
                    if run >= 3 {
                        bits.match(run)
                        i += run
                    } else {
                        bits.literal(data[i])
                        previous = data[i]
                        i += 1
                    }
                }
            case .zeros(let count):
                crc.updateZeros(count)
                length += count
                var left = count
                if previous != 0, left > 0 {
                    bits.literal(0)
                    previous = 0
                    left -= 1
                }
                while left >= 3 {
                    let run = min(258, left)
                    bits.match(run)
                    left -= run
                }
                while left > 0 {
                    bits.literal(0)
                    left -= 1
                }
            }
        }
        bits.symbol(256)
        return gzipHeader + bits.finish() + le32(crc.value) + le32(UInt32(truncatingIfNeeded: length))
    }

    private static let gzipHeader: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]

    private static func gzipStored(_ data: [UInt8]) -> [UInt8] {
        var out = gzipHeader
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final] + le16(UInt16(count)) + le16(~UInt16(count))
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        return out + le32(crc32(data)) + le32(UInt32(truncatingIfNeeded: data.count))
    }

    /// CRC-32 as gzip and zip use it.
    public static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc = CRC()
        crc.update(data)
        return crc.value
    }

    // MARK: zip

    /// One zip entry, stored (method 0).
    public struct ZipEntry: Sendable {
        public var name: [UInt8]
        public var data: [UInt8]
        /// The name in the local header when it must differ from the central directory's.
        public var localName: [UInt8]?
        /// The CRC written when it must be wrong.
        public var crc: UInt32?
        /// Unix mode in the external attributes (file type bits included).
        public var unixMode: UInt32
        public var flags: UInt16

        public init(name: [UInt8], data: [UInt8] = [], localName: [UInt8]? = nil, crc: UInt32? = nil,
                    unixMode: UInt32 = 0o100644, flags: UInt16 = 0) {
            self.name = name
            self.data = data
            self.localName = localName
            self.crc = crc
            self.unixMode = unixMode
            self.flags = flags
        }

        /// A regular file.
        public static func file(_ name: String, _ text: String = "") -> ZipEntry {
            ZipEntry(name: Array(name.utf8), data: Array(text.utf8))
        }
        /// A folder (name ends with `/`).
        public static func directory(_ name: String) -> ZipEntry {
            ZipEntry(name: Array(name.utf8), unixMode: 0o040755)
        }
        /// A symbolic link: the target is the data, the type is in the external attributes.
        public static func symlink(_ name: String, to target: String) -> ZipEntry {
            ZipEntry(name: Array(name.utf8), data: Array(target.utf8), unixMode: 0o120777)
        }
    }

    /// A zip of stored entries with a central directory (omitted when `centralDirectory` is false).
    public static func zip(_ entries: [ZipEntry], centralDirectory: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        for entry in entries {
            let offset = out.count
            let crc = entry.crc ?? crc32(entry.data)
            let local = entry.localName ?? entry.name
            out += le32(0x0403_4B50) + le16(20) + le16(entry.flags) + le16(0) + le16(0) + le16(0x5021)
            out += le32(crc) + le32(UInt32(entry.data.count)) + le32(UInt32(entry.data.count))
            out += le16(UInt16(local.count)) + le16(0) + local + entry.data
            central += le32(0x0201_4B50) + le16(0x031E) + le16(20) + le16(entry.flags) + le16(0) + le16(0) + le16(0x5021)
            central += le32(crc) + le32(UInt32(entry.data.count)) + le32(UInt32(entry.data.count))
            central += le16(UInt16(entry.name.count)) + le16(0) + le16(0) + le16(0) + le16(0)
            central += le32(entry.unixMode << 16) + le32(UInt32(offset)) + entry.name
        }
        guard centralDirectory else { return out }
        let start = out.count
        out += central
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(entries.count)) + le16(UInt16(entries.count))
        out += le32(UInt32(central.count)) + le32(UInt32(start)) + le16(0)
        return out
    }

    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
}

/// LSB-first bit writer with the fixed Huffman code of DEFLATE (RFC 1951 §3.2.6).
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var current: UInt32 = 0
    private var count: UInt32 = 0

    mutating func write(_ value: UInt32, _ width: UInt32) {
        current |= value << count
        count += width
        while count >= 8 {
            bytes.append(UInt8(current & 0xFF))
            current >>= 8
            count -= 8
        }
    }

    /// Huffman codes are sent most significant bit first.
    private mutating func code(_ value: UInt32, _ width: UInt32) {
        var reversed: UInt32 = 0
        for i in 0..<width where value & (1 << i) != 0 { reversed |= 1 << (width - 1 - i) }
        write(reversed, width)
    }

    mutating func symbol(_ s: Int) {
        switch s {
        case 0...143: code(UInt32(0x30 + s), 8)
        case 144...255: code(UInt32(0x190 + s - 144), 9)
        case 256...279: code(UInt32(s - 256), 7)
        default: code(UInt32(0xC0 + s - 280), 8)
        }
    }

    mutating func literal(_ byte: UInt8) { symbol(Int(byte)) }

    /// A match of `length` (3...258) at distance 1.
    mutating func match(_ length: Int) {
        let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
        let extras: [UInt32] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
        let index = length == 258 ? 28 : (bases.lastIndex { $0 <= length } ?? 0)
        symbol(257 + index)
        if extras[index] > 0 { write(UInt32(length - bases[index]), extras[index]) }
        code(0, 5)  // distance code 0: distance 1
    }

    mutating func finish() -> [UInt8] {
        if count > 0 { bytes.append(UInt8(current & 0xFF)) }
        return bytes
    }
}

/// Bitwise-table CRC-32 for test data (zeros are fed through a 64 KiB zero block).
private struct CRC {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
    private(set) var value: UInt32 = 0

    mutating func update(_ data: some Sequence<UInt8>) {
        var c = ~value
        for byte in data { c = Self.table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        value = ~c
    }

    mutating func updateZeros(_ count: Int) {
        var c = ~value
        for _ in 0..<count { c = Self.table[Int(c & 0xFF)] ^ (c >> 8) }
        value = ~c
    }
}
