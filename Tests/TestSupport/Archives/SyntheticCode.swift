import Foundation

/// Deterministic bytes that look and compress like a bundler's JavaScript output, for
/// tests that need many files or large ones (delta patches, archives).
public enum SyntheticCode {
    /// `count` bytes from `seed`: the same seed always gives the same bytes.
    public static func content(seed: UInt64, count: Int) -> Data {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1
        let words = ["const ", "function ", "return ", "export ", "import ", "=> ", "{", "}", ";\n", "value", "props", "state"]
        var out = Data()
        out.reserveCapacity(count + 16)
        while out.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out.append(contentsOf: words[Int(state >> 59) % words.count].utf8)
            out.append(contentsOf: String(state >> 40 & 0xFFF, radix: 36).utf8)
        }
        return out.prefix(count)
    }
}
