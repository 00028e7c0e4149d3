/// CRC-32 (IEEE 802.3, the polynomial of gzip and zip), computed slicing-by-8.
///
/// libarchive never checks the gzip trailer, so ``SafeExtractor`` runs this over the
/// whole decompressed stream and compares it with the trailer itself. Pure Swift so the
/// package needs no zlib headers.
struct CRC32 {
    private(set) var value: UInt32 = 0

    private static let tables: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[n] = c
        }
        for n in 0..<256 {
            var c = table[n]
            for k in 1..<8 {
                c = table[Int(c & 0xFF)] ^ (c >> 8)
                table[k * 256 + n] = c
            }
        }
        return table
    }()

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = ~value
        Self.tables.withUnsafeBufferPointer { t in
            var i = 0
            let n = bytes.count
            while i + 8 <= n {
                let lo = crc ^ (UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
                let hi = UInt32(bytes[i + 4]) | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6]) << 16 | UInt32(bytes[i + 7]) << 24
                crc =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
        }
        value = ~crc
    }
}
