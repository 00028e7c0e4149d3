import Foundation

extension HostileArchive {
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
