/// The one rule for "this name carries a content hash", so the file never changes under it
/// and may be cached as immutable. The organizer marks such files cacheable; the server
/// answers them `immutable`. A false "hashed" would pin stale bytes in a web view's cache
/// across updates, so the rule asks for evidence of a hash, not just a long word.
///
/// A name is hashed when, not counting its extension (and `.js` before `.map`), either
/// - a `.` or `-` separated part is 8 to 64 letters, digits or `_` and mixes letters and
///   digits: webpack `main.3f62a1b9.chunk.js`, `app-0123456789abcdef0123.js`, Vite
///   `index-B2x9Kq1z.js`, Rollup `opacities.Blb4Ho7_.js`; or
/// - its last 8 characters follow a `.` or `-` and are Rollup's base64url hash alphabet
///   (`A-Z a-z 0-9 _ -`) with a digit, or with both cases and a capital after the first
///   character: Vite `index.DormvYxC.js`, `index-B-x9Kq1z.js` (Rollup's default hash is 8
///   characters and may contain `_` and `-`; measured on a real Vite build).
/// Plain names are not: `app.js`, `style-settings.css`, `logo-darkMode.svg`,
/// `jquery-3.7.1.min.js`, `MyComponent.js`.
package enum HashedName {
    /// Whether the last path component of `path` carries a content hash.
    package static func looksHashed(_ path: String) -> Bool {
        guard let name = path.split(separator: "/").last else { return false }
        var stem = Substring(name)
        for _ in 0..<2 {  // `x.js.map`: drop `.map`, then `.js`
            guard let dot = stem.lastIndex(of: "."), dot != stem.startIndex else { break }
            let ext = stem[stem.index(after: dot)...]
            let wasMap = ext == "map"
            stem = stem[..<dot]
            if !wasMap { break }
        }
        let parts = stem.split(whereSeparator: { $0 == "-" || $0 == "." })
        if parts.dropFirst().contains(where: mixedHashPart) { return true }
        return rollupSuffix(stem)
    }

    /// True when `path` holds a run of 40 hex digits (a SHA-1: Meteor's `?hash` URLs and
    /// source-map names).
    package static func containsSHA1Hex(_ path: String) -> Bool {
        var run = 0
        for c in path.utf8 {
            if isHexDigit(c) {
                run += 1
                if run >= 40 { return true }
            } else {
                run = 0
            }
        }
        return false
    }

    private static func mixedHashPart(_ part: Substring) -> Bool {
        guard (8...64).contains(part.utf8.count) else { return false }
        var digits = false
        var letters = false
        for c in part.utf8 {
            if isDigit(c) { digits = true } else if isLetter(c) { letters = true } else if c != 0x5F { return false }
        }
        return digits && letters
    }

    private static func rollupSuffix(_ stem: Substring) -> Bool {
        let bytes = Array(stem.utf8)
        guard bytes.count > 8 else { return false }
        let separator = bytes[bytes.count - 9]
        guard separator == 0x2E || separator == 0x2D else { return false }
        let hash = bytes[(bytes.count - 8)...]
        guard hash.allSatisfy({ isDigit($0) || isLetter($0) || $0 == 0x5F || $0 == 0x2D }),
            hash.contains(where: isLetter)
        else { return false }
        if hash.contains(where: isDigit) { return true }
        let upper = hash.filter { $0 >= 0x41 && $0 <= 0x5A }.count
        let lower = hash.filter { $0 >= 0x61 && $0 <= 0x7A }.count
        let innerCapital = hash.dropFirst().contains { $0 >= 0x41 && $0 <= 0x5A }
        return upper >= 2 && lower >= 2 && innerCapital
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func isLetter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
    private static func isHexDigit(_ c: UInt8) -> Bool { isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66) }
}
