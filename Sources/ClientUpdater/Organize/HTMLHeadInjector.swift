import Foundation

/// Inserts bytes as the first thing inside an HTML document's `<head>`, without parsing
/// or re-serializing anything else: every other byte of the document is kept as is.
enum HTMLHeadInjector {
    /// `html` with `element` right after the `<head …>` start tag; when there is no
    /// `<head>`, a `<head>element</head>` is created after `<html …>` (or after the
    /// doctype, or at the very start). Returns `html` unchanged if it contains `marker`.
    static func inject(_ element: Data, into html: Data, unlessContains marker: Data) -> Data {
        let bytes = [UInt8](html)
        if !marker.isEmpty, bytes.firstRange(of: [UInt8](marker)) != nil { return html }
        if let end = startTagEnd(named: "head", in: bytes, stopAt: "body") {
            return splice(bytes, at: end, element)
        }
        let wrapped = Data("<head>".utf8) + element + Data("</head>".utf8)
        if let end = startTagEnd(named: "html", in: bytes, stopAt: nil) {
            return splice(bytes, at: end, wrapped)
        }
        if let end = doctypeEnd(in: bytes) {
            return splice(bytes, at: end, wrapped)
        }
        return wrapped + html
    }

    private static func splice(_ bytes: [UInt8], at offset: Int, _ insert: Data) -> Data {
        var out = Data(capacity: bytes.count + insert.count)
        out.append(contentsOf: bytes[..<offset])
        out.append(insert)
        out.append(contentsOf: bytes[offset...])
        return out
    }

    /// The offset just past the `>` of the first `<name …>` start tag outside comments,
    /// or nil. Matching is ASCII case-insensitive and whole-name (`<header>` is not
    /// `<head>`); quoted attribute values may contain `>`. Search ends at `<stopAt`.
    static func startTagEnd(named name: String, in bytes: [UInt8], stopAt: String?) -> Int? {
        let target = Array(name.utf8)
        let stop = stopAt.map { Array($0.utf8) }
        var i = 0
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                i += 1
                continue
            }
            if matches(bytes, at: i + 1, Array("!--".utf8)) {
                guard let close = bytes[(i + 4)...].firstRange(of: Array("-->".utf8)) else { return nil }
                i = close.upperBound
                continue
            }
            if matchesTagName(bytes, at: i + 1, target) {
                return tagEnd(bytes, from: i + 1 + target.count)
            }
            if let stop, matchesTagName(bytes, at: i + 1, stop) { return nil }
            i += 1
        }
        return nil
    }

    /// The offset past `>` of a tag whose name ended at `from`, skipping quoted values.
    private static func tagEnd(_ bytes: [UInt8], from: Int) -> Int? {
        var quote: UInt8?
        var j = from
        while j < bytes.count {
            let c = bytes[j]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                quote = c
            } else if c == UInt8(ascii: ">") {
                return j + 1
            }
            j += 1
        }
        return nil
    }

    private static func doctypeEnd(in bytes: [UInt8]) -> Int? {
        var i = 0
        while i < bytes.count,
            bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0xEF || bytes[i] == 0xBB || bytes[i] == 0xBF
        {
            i += 1
        }
        guard matches(bytes, at: i, Array("<!doctype".utf8)) else { return nil }
        return tagEnd(bytes, from: i + 9)
    }

    private static func matchesTagName(_ bytes: [UInt8], at offset: Int, _ name: [UInt8]) -> Bool {
        guard matches(bytes, at: offset, name) else { return false }
        let after = offset + name.count
        guard after < bytes.count else { return false }
        let c = bytes[after]
        return c == UInt8(ascii: ">") || c == UInt8(ascii: "/") || c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D
    }

    /// ASCII case-insensitive comparison of `bytes[offset...]` with lowercase `pattern`.
    private static func matches(_ bytes: [UInt8], at offset: Int, _ pattern: [UInt8]) -> Bool {
        guard offset >= 0, offset + pattern.count <= bytes.count else { return false }
        for k in 0..<pattern.count {
            var c = bytes[offset + k]
            if c >= 0x41 && c <= 0x5A { c += 0x20 }
            if c != pattern[k] { return false }
        }
        return true
    }
}
