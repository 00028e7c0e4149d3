/// The central directory of a zip, read and cross-checked before libarchive streams it.
///
/// libarchive trusts the local headers: when a local name differs from the central
/// directory's it uses the local one, and a zip without a central directory fails only at
/// the end. So before extracting, this reads the end record and every central entry,
/// applies the entry rule to each name, refuses encryption and compression methods other
/// than stored and deflate, reads every local header to compare its name, and refuses
/// entries whose data overlap (the overlapping-entries bomb).
struct ZipDirectory {
    struct Entry {
        var name: [UInt8]
        var method: UInt16
        var compressedSize: UInt64
        var localOffset: UInt64
        var isDirectory: Bool { name.last == UInt8(ascii: "/") }
    }

    private(set) var entries: [Entry] = []

    static func read(_ source: FileSource, limits: ExtractionLimits) throws(ExtractionError) -> ZipDirectory {
        let end = try endRecord(source)
        guard end.count > 0 else { throw ExtractionError(.empty, "archive has no entries") }
        guard end.count <= UInt64(limits.maxEntries) else {
            throw ExtractionError(.limitExceeded, "more than \(limits.maxEntries) entries")
        }
        var directory = ZipDirectory()
        var reader = ChunkReader(source: source, position: end.offset, end: end.offset + end.size)
        let rule = limits.entryRule
        for _ in 0..<end.count {
            let fixed = try reader.take(46)
            guard le32(fixed, 0) == 0x0201_4B50 else { throw corrupt("zip central directory entry is damaged") }
            let madeBy = le16(fixed, 4)
            let flags = le16(fixed, 8)
            let method = le16(fixed, 10)
            var compressed = UInt64(le32(fixed, 20))
            var offset = UInt64(le32(fixed, 42))
            let uncompressed = le32(fixed, 24)
            let name = try reader.take(Int(le16(fixed, 28)))
            let extra = try reader.take(Int(le16(fixed, 30)))
            _ = try reader.take(Int(le16(fixed, 32)))
            let external = le32(fixed, 38)
            if uncompressed == 0xFFFF_FFFF || compressed == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
                let values = zip64Values(extra)
                var next = 0
                if uncompressed == 0xFFFF_FFFF { next += 1 }
                if compressed == 0xFFFF_FFFF {
                    guard next < values.count else { throw corrupt("zip64 sizes missing", name) }
                    compressed = values[next]
                    next += 1
                }
                if offset == 0xFFFF_FFFF {
                    guard next < values.count else { throw corrupt("zip64 offset missing", name) }
                    offset = values[next]
                }
            }
            guard offset < source.size, compressed <= source.size else {
                throw corrupt("zip entry lies outside the file", name)
            }
            let entry = Entry(name: name, method: method, compressedSize: compressed, localOffset: offset)
            if case .rejected(let reason) = rule.check(name, isDirectory: entry.isDirectory) {
                throw ExtractionError(.entryRejected, entryName: name, reason)
            }
            if flags & 0x41 != 0 { throw ExtractionError(.entryRejected, entryName: name, "encrypted entry") }
            if flags & 0x800 == 0, name.contains(where: { $0 >= 0x80 }) {
                throw ExtractionError(.entryRejected, entryName: name, "name is not flagged as UTF-8")
            }
            if madeBy >> 8 == 3, let kind = unixKind(external >> 16) {
                throw ExtractionError(.entryRejected, entryName: name, kind)
            }
            guard method == 0 || method == 8 else {
                throw ExtractionError(.unsupported, entryName: name, "zip compression method \(method) is not allowed")
            }
            directory.entries.append(entry)
        }
        try directory.checkLocalHeaders(source, directoryStart: end.offset)
        return directory
    }

    /// Compares each local header with its central entry and refuses overlapping data.
    private func checkLocalHeaders(_ source: FileSource, directoryStart: UInt64) throws(ExtractionError) {
        let sorted = entries.sorted { $0.localOffset < $1.localOffset }
        for (index, entry) in sorted.enumerated() {
            guard let fixed = source.bytes(at: entry.localOffset, count: 30), fixed.count == 30,
                le32(fixed, 0) == 0x0403_4B50
            else { throw corrupt("zip local header missing", entry.name) }
            let nameLength = Int(le16(fixed, 26))
            let extraLength = UInt64(le16(fixed, 28))
            guard let local = source.bytes(at: entry.localOffset + 30, count: nameLength), local.count == nameLength else {
                throw corrupt("zip local header truncated", entry.name)
            }
            guard local == entry.name else {
                throw ExtractionError(
                    .corrupt, entryName: local,
                    "zip local header name differs from central directory name \(displayName(entry.name))")
            }
            guard le16(fixed, 8) == entry.method else {
                throw corrupt("zip local header method differs from central directory", entry.name)
            }
            let dataEnd = entry.localOffset + 30 + UInt64(nameLength) + extraLength + entry.compressedSize
            let limit = index + 1 < sorted.count ? sorted[index + 1].localOffset : directoryStart
            guard dataEnd <= limit else { throw corrupt("zip entry data overlaps the next entry", entry.name) }
        }
    }

    private struct EndRecord {
        var count: UInt64
        var offset: UInt64
        var size: UInt64
    }

    /// Finds the end of central directory record (and its zip64 form), which must end the file.
    private static func endRecord(_ source: FileSource) throws(ExtractionError) -> EndRecord {
        let tailLength = Int(min(source.size, 22 + 0xFFFF))
        guard tailLength >= 22, let tail = source.bytes(at: source.size - UInt64(tailLength), count: tailLength),
            tail.count == tailLength
        else { throw corrupt("zip end of central directory not found") }
        var position = tailLength - 22
        while position >= 0 {
            if le32(tail, position) == 0x0605_4B50, position + 22 + Int(le16(tail, position + 20)) == tailLength { break }
            position -= 1
        }
        guard position >= 0 else { throw corrupt("zip end of central directory not found") }
        guard le16(tail, position + 4) == 0, le16(tail, position + 6) == 0,
            le16(tail, position + 8) == le16(tail, position + 10)
        else { throw ExtractionError(.unsupported, "multi-disk zip") }
        let recordStart = source.size - UInt64(tailLength - position)
        var record = EndRecord(
            count: UInt64(le16(tail, position + 10)), offset: UInt64(le32(tail, position + 16)),
            size: UInt64(le32(tail, position + 12)))
        var directoryLimit = recordStart
        if record.count == 0xFFFF || record.offset == 0xFFFF_FFFF || record.size == 0xFFFF_FFFF {
            guard recordStart >= 20, let locator = source.bytes(at: recordStart - 20, count: 20), locator.count == 20,
                le32(locator, 0) == 0x0706_4B50,
                let zip64 = source.bytes(at: le64(locator, 8), count: 56), zip64.count == 56, le32(zip64, 0) == 0x0606_4B50
            else { throw corrupt("zip64 end of central directory not found") }
            record = EndRecord(count: le64(zip64, 32), offset: le64(zip64, 48), size: le64(zip64, 40))
            directoryLimit = le64(locator, 8)
        }
        guard record.offset <= directoryLimit, record.size <= directoryLimit - record.offset else {
            throw corrupt("zip central directory lies outside the file")
        }
        return record
    }

    private static func zip64Values(_ extra: [UInt8]) -> [UInt64] {
        var index = 0
        while index + 4 <= extra.count {
            let id = le16(extra, index)
            let length = Int(le16(extra, index + 2))
            guard index + 4 + length <= extra.count else { return [] }
            if id == 0x0001 {
                return stride(from: index + 4, to: index + 4 + length - 7, by: 8).map { le64(extra, $0) }
            }
            index += 4 + length
        }
        return []
    }

    private static func unixKind(_ mode: UInt32) -> String? {
        switch mode & 0o170000 {
        case 0, 0o100000, 0o040000: return nil
        case 0o120000: return "symbolic link"
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        case 0o010000: return "fifo"
        case 0o140000: return "socket"
        default: return "unsupported entry type"
        }
    }
}

/// A bounded sequential reader over part of the file (64 KiB at a time).
private struct ChunkReader {
    let source: FileSource
    var position: UInt64
    let end: UInt64
    private var buffer: [UInt8] = []
    private var index = 0

    init(source: FileSource, position: UInt64, end: UInt64) {
        self.source = source
        self.position = position
        self.end = end
    }

    mutating func take(_ count: Int) throws(ExtractionError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if index == buffer.count {
                guard position < end, let next = source.bytes(at: position, count: Int(min(65536, end - position))),
                    !next.isEmpty
                else { throw corrupt("zip central directory is truncated") }
                buffer = next
                index = 0
                position += UInt64(next.count)
            }
            let step = min(count - out.count, buffer.count - index)
            out += buffer[index..<(index + step)]
            index += step
        }
        return out
    }
}

private func corrupt(_ reason: String, _ name: [UInt8]? = nil) -> ExtractionError {
    if let name { return ExtractionError(.corrupt, entryName: name, reason) }
    return ExtractionError(.corrupt, reason)
}

private func le16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
private func le32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(le16(b, i)) | UInt32(le16(b, i + 2)) << 16 }
private func le64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(le32(b, i)) | UInt64(le32(b, i + 4)) << 32 }
