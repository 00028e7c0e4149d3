import StrictJSON
@testable import SignedManifest

/// Value equality for round-trip properties, stricter than `JSONValue ==` where that is
/// lenient and looser where canonical form legitimately changes the spelling: strings and
/// keys compare by Unicode scalars (Swift `String ==` would equate composed and decomposed
/// forms), and numbers compare by value across kinds (canonical `1.0` is `1`).
enum JSONSemantics {
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            return x.members.allSatisfy { member in
                guard let other = y.members.first(where: { $0.key.unicodeScalars.elementsEqual(member.key.unicodeScalars) })
                else { return false }
                return same(member.value, other.value)
            }
        default:
            guard let x = number(a), let y = number(b) else { return false }
            return x == y
        }
    }

    private static func number(_ v: JSONValue) -> Double? {
        switch v {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}
