import ClientFoundation

/// The name half of the entry rule (docs/threat-model.md#the-entry-rule): decides from an entry's raw
/// name bytes, before anything is written, whether the name is acceptable.
///
/// Accepted names are relative UTF-8 paths without NUL or control characters, without
/// `\`, without empty, `.` or `..` components (a leading `./` is allowed and dropped), with
/// each component at most ``maxComponentBytes`` bytes, the whole name at most
/// ``maxPathBytes`` bytes and at most ``maxDepth`` components, and servable under its own
/// name (``ServedPathRule``: no `?`, no percent escape that decodes to something else).
package struct EntryRule: Sendable, Equatable {
    /// Most bytes in the whole name.
    package var maxPathBytes: Int
    /// Most bytes in one component.
    package var maxComponentBytes: Int
    /// Most components.
    package var maxDepth: Int

    /// Creates a rule with the given bounds (defaults: 1024, 255, 32).
    package init(maxPathBytes: Int = 1024, maxComponentBytes: Int = 255, maxDepth: Int = 32) {
        self.maxPathBytes = maxPathBytes
        self.maxComponentBytes = maxComponentBytes
        self.maxDepth = maxDepth
    }

    /// The outcome of checking one name.
    package enum Verdict: Sendable, Equatable {
        /// The name is acceptable; these are its components (empty for the archive root, `./`).
        case accepted([String])
        /// The name is refused for this reason (e.g. `".." path component`).
        case rejected(String)
    }

    /// Checks the raw name of an entry; `isDirectory` allows one trailing `/`.
    package func check(_ name: some Collection<UInt8>, isDirectory: Bool) -> Verdict {
        let bytes = Array(name)
        if bytes.isEmpty { return .rejected("empty name") }
        if bytes.contains(0) { return .rejected("NUL byte in name") }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .rejected("control character in name") }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .rejected("name is not valid UTF-8") }
        if text.unicodeScalars.contains(where: { (0x80..<0xA0).contains($0.value) }) {
            return .rejected("control character in name")
        }
        if bytes.contains(UInt8(ascii: "\\")) { return .rejected("backslash in name") }
        if bytes.first == UInt8(ascii: "/") { return .rejected("absolute path") }
        if bytes.count > maxPathBytes { return .rejected("path longer than \(maxPathBytes) bytes") }

        var rest = bytes[...]
        while rest.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) { rest = rest.dropFirst(2) }
        if isDirectory, rest.last == UInt8(ascii: "/") { rest = rest.dropLast() }
        if rest.isEmpty || (isDirectory && rest.elementsEqual([UInt8(ascii: ".")])) {
            return isDirectory ? .accepted([]) : .rejected("empty path component")
        }
        var components: [String] = []
        for part in rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if part.isEmpty { return .rejected("empty path component") }
            if part.elementsEqual([UInt8(ascii: ".")]) { return .rejected("\".\" path component") }
            if part.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { return .rejected("\"..\" path component") }
            if part.count > maxComponentBytes {
                return .rejected("path component longer than \(maxComponentBytes) bytes")
            }
            components.append(String(decoding: part, as: UTF8.self))
        }
        if components.count > maxDepth { return .rejected("path deeper than \(maxDepth) levels") }
        if let problem = ServedPathRule.problem(withStoredPath: components.joined(separator: "/")) { return .rejected(problem) }
        return .accepted(components)
    }
}
