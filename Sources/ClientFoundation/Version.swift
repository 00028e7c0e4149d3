/// A Semantic Versioning 2.0.0 version.
///
/// Parsing is strict (no `v` prefix, no leading zeros in numeric identifiers, no empty
/// identifiers, ASCII only). Precedence follows the specification exactly; build
/// metadata is kept for display but ignored by `==`, `<` and hashing.
public struct Version: Sendable, Comparable, Hashable, CustomStringConvertible, Codable {
    public var major: UInt64
    public var minor: UInt64
    public var patch: UInt64
    /// Pre-release identifiers (`alpha`, `1` in `1.0.0-alpha.1`).
    public var prerelease: [String]
    /// Build metadata identifiers (after `+`); ignored for precedence and equality.
    public var build: [String]

    public init(_ major: UInt64, _ minor: UInt64, _ patch: UInt64, prerelease: [String] = [], build: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses a SemVer 2.0.0 string; returns `nil` when it is not one.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 256 else { return nil }
        var rest = Substring(text)
        var build: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            let ids = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false)
            guard !ids.isEmpty, ids.allSatisfy({ Self.isIdentifier($0) }) else { return nil }
            build = ids.map(String.init)
            rest = rest[..<plus]
        }
        var prerelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            let ids = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false)
            guard !ids.isEmpty else { return nil }
            for id in ids {
                guard Self.isIdentifier(id) else { return nil }
                if Self.isNumeric(id), id.count > 1, id.first == "0" { return nil }
            }
            prerelease = ids.map(String.init)
            rest = rest[..<dash]
        }
        let core = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3 else { return nil }
        var numbers: [UInt64] = []
        for part in core {
            guard Self.isNumeric(part), !(part.count > 1 && part.first == "0"), let n = UInt64(part) else { return nil }
            numbers.append(n)
        }
        self.init(numbers[0], numbers[1], numbers[2], prerelease: prerelease, build: build)
    }

    public var description: String {
        var s = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty { s += "-" + prerelease.joined(separator: ".") }
        if !build.isEmpty { s += "+" + build.joined(separator: ".") }
        return s
    }

    public static func == (lhs: Version, rhs: Version) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.patch == rhs.patch && lhs.prerelease == rhs.prerelease
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        if lhs.minor != rhs.minor { return lhs.minor < rhs.minor }
        if lhs.patch != rhs.patch { return lhs.patch < rhs.patch }
        // A version without pre-release identifiers has higher precedence.
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, true), (true, false): return false
        case (false, true): return true
        case (false, false): break
        }
        for (a, b) in zip(lhs.prerelease, rhs.prerelease) where a != b {
            switch (
                UInt64(a).flatMap { Self.isNumeric(Substring(a)) ? $0 : nil },
                UInt64(b).flatMap { Self.isNumeric(Substring(b)) ? $0 : nil }
            ) {
            case (let x?, let y?): return x < y
            case (.some, nil): return true  // numeric identifiers sort before alphanumeric
            case (nil, .some): return false
            case (nil, nil): return Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
            }
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let v = Version(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a SemVer 2.0 version"))
        }
        self = v
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    private static func isIdentifier(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
    }

    private static func isNumeric(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
