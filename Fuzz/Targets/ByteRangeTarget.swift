@testable import ServingCore

/// `Range: bytes=…` as `serve` reads it. Input: 8 bytes of file size, then the header value.
/// A satisfiable range must lie inside the file, and a range header is never answered with
/// a crash whatever the size (an empty file included).
enum ByteRangeTarget: FuzzTarget {
    static let name = "byte-range"

    static func run(_ data: [UInt8]) {
        guard data.count >= 8 else { return }
        var raw: UInt64 = 0
        for byte in data[..<8] { raw = raw << 8 | UInt64(byte) }
        // Sizes a file can have, with the edges (0, 1) reached often.
        let size = Int64(raw % (1 << 40)) >> Int64(data[0] % 41)
        let header = String(decoding: data[8...], as: UTF8.self)
        switch ByteRange.parse(header, size: size) {
        case .satisfiable(let range):
            guard range.lowerBound >= 0, range.upperBound < size else {
                FuzzFinding.fail(name, "range \(range) outside a file of \(size) bytes for \(header.debugDescription)")
            }
        case .unsatisfiable, .ignored:
            break
        }
    }
}
