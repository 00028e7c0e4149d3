import Foundation

extension HostileArchive {
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

        public init(
            name: [UInt8], data: [UInt8] = [], localName: [UInt8]? = nil, crc: UInt32? = nil,
            unixMode: UInt32 = 0o100644, flags: UInt16 = 0
        ) {
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

    /// An overlapping-entries zip bomb (Fifield's layout): every local header is followed by
    /// the next ones, and each entry's stored data runs over them to one shared `kernel`.
    public static func zipOverlapping(names: [String], kernel: [UInt8]) -> [UInt8] {
        var headers: [[UInt8]] = []
        var size = kernel.count
        var out: [UInt8] = kernel
        for name in names.reversed() {
            let header =
                le32(0x0403_4B50) + le16(20) + le16(0x800) + le16(0) + le16(0) + le16(0x5021)
                + le32(crc32(out)) + le32(UInt32(size)) + le32(UInt32(size)) + le16(UInt16(name.utf8.count)) + le16(0)
                + Array(name.utf8)
            headers.insert(header, at: 0)
            out = header + out
            size = out.count - header.count
        }
        var central: [UInt8] = []
        var offset = 0
        for (name, header) in Swift.zip(names, headers) {
            let entrySize = UInt32(out.count - offset - header.count)
            central += le32(0x0201_4B50) + le16(0x031E) + le16(20) + le16(0x800) + le16(0) + le16(0) + le16(0x5021)
            central += Array(header[14..<18]) + le32(entrySize) + le32(entrySize)
            central += le16(UInt16(name.utf8.count)) + le16(0) + le16(0) + le16(0) + le16(0)
            central += le32(0o100644 << 16) + le32(UInt32(offset)) + Array(name.utf8)
            offset += header.count
        }
        let start = out.count
        out += central
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(names.count)) + le16(UInt16(names.count))
        out += le32(UInt32(central.count)) + le32(UInt32(start)) + le16(0)
        return out
    }
}
