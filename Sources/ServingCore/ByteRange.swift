/// A single `Range: bytes=…` request (RFC 9110 §14); multiple ranges are not supported
/// and are answered with the whole file, as the RFC allows.
enum ByteRange: Equatable {
    /// Serve these bytes (inclusive bounds, already clamped to the file).
    case satisfiable(ClosedRange<Int64>)
    /// No byte of the file is in the range: 416.
    case unsatisfiable
    /// Malformed or several ranges: ignore the header.
    case ignored

    static func parse(_ header: String, size: Int64) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .ignored }
        let spec = header.dropFirst(6).trimmingWhitespace()
        guard let dash = spec.firstIndex(of: "-") else { return .ignored }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Int64(last), suffix >= 0 else { return .ignored }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .satisfiable(max(0, size - suffix)...(size - 1))
        }
        guard let start = Int64(first), start >= 0 else { return .ignored }
        var end = size - 1
        if !last.isEmpty {
            guard let e = Int64(last), e >= start else { return .ignored }
            end = min(e, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .satisfiable(start...end)
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
