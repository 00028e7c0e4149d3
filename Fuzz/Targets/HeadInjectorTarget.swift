import Foundation

@testable import ClientUpdater

/// The shim injector: the output is the input with exactly one insertion (no other byte
/// changes), the shim comes right after a `<head …>` start tag (the document's, or one it
/// added), injecting again changes nothing, and the shim appears once.
enum HeadInjectorTarget: FuzzTarget {
    static let name = "head-injector"
    // Computed, not stored: LeakSanitizer cannot see a `Data` held in a static and reports
    // it as leaked at exit.
    static var element: Data { Data("<script data-clientctl-fuzz>shim()</script>".utf8) }
    static var marker: Data { Data("data-clientctl-fuzz".utf8) }

    static func run(_ data: [UInt8]) {
        let input = Data(data)
        let output = HTMLHeadInjector.inject(element, into: input, unlessContains: marker)
        if input.range(of: marker) != nil {
            guard output == input else { FuzzFinding.fail(name, "changed a page that already has the shim") }
            return
        }
        let out = [UInt8](output)
        guard let at = out.firstRange(of: [UInt8](element)) else { FuzzFinding.fail(name, "shim missing") }
        var rest = Array(out[..<at.lowerBound]) + Array(out[at.upperBound...])
        // A created `<head>…</head>` wrapper is the only other insertion allowed.
        if rest.count != data.count {
            let open = Array("<head>".utf8)
            let close = Array("</head>".utf8)
            let start = at.lowerBound - open.count
            guard start >= 0, Array(rest[start..<at.lowerBound]) == open,
                Array(rest[at.lowerBound..<(at.lowerBound + close.count)]) == close
            else { FuzzFinding.fail(name, "output differs from the input by more than the shim") }
            rest.removeSubrange(at.lowerBound..<(at.lowerBound + close.count))
            rest.removeSubrange(start..<at.lowerBound)
        }
        guard rest == data else { FuzzFinding.fail(name, "bytes of the page changed") }
        // Right after a `<head …>` start tag: a `>` ends what precedes the shim, and a `<head`
        // tag name (ended by whitespace, `/` or `>`) opens before it. Attribute text may hold
        // `<` and `>` (quoted), so the tag is not re-tokenized here; FUZZING.md says so.
        let before = Array(out[..<at.lowerBound]).map { (65...90).contains($0) ? $0 + 32 : $0 }
        let boundary: Set<UInt8> = [
            UInt8(ascii: ">"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"),
            UInt8(ascii: "\r"), UInt8(ascii: "/"), 0x0C,
        ]
        let opensHead = before.indices.contains { i in
            before[i...].starts(with: Array("<head".utf8)) && i + 5 < before.count && boundary.contains(before[i + 5])
        }
        guard before.last == UInt8(ascii: ">"), opensHead else {
            FuzzFinding.fail(name, "shim is not right after a <head> start tag")
        }
        guard HTMLHeadInjector.inject(element, into: output, unlessContains: marker) == output else {
            FuzzFinding.fail(name, "injecting twice changed the page")
        }
    }
}
