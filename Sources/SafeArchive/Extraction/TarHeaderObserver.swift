/// Watches the raw tar stream beside libarchive for names that hide a NUL byte.
///
/// libarchive cuts a name at its first NUL (`index.html\0../x` becomes `index.html`), so
/// the entry rule cannot see it. This observer follows the 512-byte header blocks
/// (ustar name and prefix fields, GNU long names, pax `path` records) and reports a name
/// whose bytes go on after a NUL. It only ever adds a refusal: on anything it does not
/// understand (bad header checksum, oversized metadata) it stops watching and leaves the
/// decision to libarchive and the entry rule.
struct TarHeaderObserver {
    private enum State {
        case header
        case skip(UInt64)
        case metadata(type: UInt8, remaining: UInt64, padding: UInt64)
        case off
    }

    private var state = State.header
    private var block: [UInt8] = []
    private var metadata: [UInt8] = []
    private var paxSize: UInt64?
    private static let maxMetadata: UInt64 = 1 << 20
    /// Sizes above this (2^62 bytes) are nonsense; the observer stops rather than overflow.
    private static let maxSize: UInt64 = 1 << 62

    /// Consumes the next bytes of the stream; returns the offending raw name and the reason.
    mutating func feed(_ chunk: UnsafeRawBufferPointer) -> ([UInt8], String)? {
        var index = 0
        while index < chunk.count {
            switch state {
            case .off:
                return nil
            case .skip(let count):
                let step = Int(min(count, UInt64(chunk.count - index)))
                index += step
                state = count - UInt64(step) == 0 ? .header : .skip(count - UInt64(step))
            case .metadata(let type, let remaining, let padding):
                let step = Int(min(remaining, UInt64(chunk.count - index)))
                metadata += chunk[index..<(index + step)]
                index += step
                if remaining - UInt64(step) > 0 {
                    state = .metadata(type: type, remaining: remaining - UInt64(step), padding: padding)
                } else {
                    state = padding > 0 ? .skip(padding) : .header
                    if let found = finishMetadata(type: type) { return found }
                }
            case .header:
                let step = min(512 - block.count, chunk.count - index)
                block += chunk[index..<(index + step)]
                index += step
                if block.count == 512 {
                    let found = header()
                    block.removeAll(keepingCapacity: true)
                    if let found { return found }
                }
            }
        }
        return nil
    }

    private mutating func header() -> ([UInt8], String)? {
        if block.allSatisfy({ $0 == 0 }) { return nil }
        guard checksumMatches(), let size = number(124, 12), size <= Self.maxSize else {
            state = .off
            return nil
        }
        if let bad = hiddenAfterNul(block[0..<100]) { return (bad, "NUL byte in name") }
        if block[257..<263].elementsEqual(Array("ustar\0".utf8)), let bad = hiddenAfterNul(block[345..<500]) {
            return (bad, "NUL byte in name")
        }
        let type = block[156]
        let padded = (size + 511) / 512 * 512
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "L"):
            guard size <= Self.maxMetadata else {
                state = .off
                return nil
            }
            metadata.removeAll(keepingCapacity: true)
            state = size > 0 ? .metadata(type: type, remaining: size, padding: padded - size) : .header
        case UInt8(ascii: "g"), UInt8(ascii: "K"):
            state = padded > 0 ? .skip(padded) : .header
        default:
            let data = paxSize.map { (min($0, Self.maxSize) + 511) / 512 * 512 } ?? padded
            paxSize = nil
            state = data > 0 ? .skip(data) : .header
        }
        return nil
    }

    private mutating func finishMetadata(type: UInt8) -> ([UInt8], String)? {
        if type == UInt8(ascii: "L") {
            return hiddenAfterNul(metadata[...]).map { ($0, "NUL byte in name") }
        }
        // pax records: "<length> <key>=<value>\n"
        var rest = metadata[...]
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: UInt8(ascii: " ")),
                let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                length > space - rest.startIndex + 1, length <= rest.count
            else { return nil }
            let record = rest[(space + 1)..<(rest.startIndex + length - 1)]
            rest = rest[(rest.startIndex + length)...]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
            let value = record[(equals + 1)...]
            if key == "path", value.contains(0) { return (Array(value), "NUL byte in name") }
            if key == "size" { paxSize = UInt64(String(decoding: value, as: UTF8.self)) }
        }
        return nil
    }

    /// The field's bytes up to its last non-NUL byte when a NUL comes before that byte.
    private func hiddenAfterNul(_ field: ArraySlice<UInt8>) -> [UInt8]? {
        guard let nul = field.firstIndex(of: 0), let last = field.lastIndex(where: { $0 != 0 }), last > nul else {
            return nil
        }
        return Array(field[field.startIndex...last])
    }

    private func checksumMatches() -> Bool {
        guard let stored = number(148, 8) else { return false }
        var sum: UInt64 = 0
        for (i, byte) in block.enumerated() { sum += (148..<156).contains(i) ? 32 : UInt64(byte) }
        return sum == stored
    }

    /// An octal field, or a base-256 one (high bit set) as GNU tar writes large sizes.
    private func number(_ offset: Int, _ length: Int) -> UInt64? {
        let field = block[offset..<(offset + length)]
        if let first = field.first, first & 0x80 != 0 {
            var value: UInt64 = UInt64(first & 0x7F)
            for byte in field.dropFirst() {
                guard value >> 56 == 0 else { return nil }
                value = value << 8 | UInt64(byte)
            }
            return value
        }
        let digits = field.drop(while: { $0 == 0x20 }).prefix(while: { $0 >= 0x30 && $0 <= 0x37 })
        var value: UInt64 = 0
        for digit in digits {
            guard value >> 60 == 0 else { return nil }
            value = value * 8 + UInt64(digit - 0x30)
        }
        return value
    }
}
