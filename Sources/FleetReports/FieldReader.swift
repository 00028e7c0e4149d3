import ClientFoundation
import DeviceIdentity
import StrictJSON

/// Reads the members of one object, each once, and says which are left over.
struct FieldReader {
    private var members: [String: JSONValue]
    let path: String

    /// The rules a string field is held to.
    enum Rule {
        /// Exactly `digits` lowercase hex digits.
        case hex(digits: Int)
        /// 1 to `maxBytes` of letters, digits, `.`, `_`, `-`.
        case identifier(maxBytes: Int)
        /// 1 to 64 of letters, digits, `.`, `+`, `-`, `_` (a SemVer or a seed's id).
        case version
        /// 1 to 32 of lowercase letters, digits and `-`.
        case word
        /// Up to `maxBytes` of UTF-8 without control characters (C0, DEL, C1, bidi controls).
        case text(maxBytes: Int)
    }

    init(_ object: JSONObject, path: String) {
        var members: [String: JSONValue] = [:]
        for member in object { members[member.key] = member.value }
        self.members = members
        self.path = path
    }

    mutating func take(_ key: String) -> JSONValue? { members.removeValue(forKey: key) }

    mutating func string(_ key: String, rule: Rule) throws -> String {
        guard let value = try optionalString(key, rule: rule) else { throw FleetReportsError(.invalidField, "\(path)\(key): missing") }
        return value
    }

    mutating func optionalString(_ key: String, rule: Rule) throws -> String? {
        guard let value = take(key), value != .null else { return nil }
        guard case .string(let s) = value else { throw FleetReportsError(.invalidField, "\(path)\(key): not a string") }
        if let why = Self.problem(s, rule) { throw FleetReportsError(.invalidField, "\(path)\(key): \(why)") }
        return s
    }

    /// A string member as it is, for a type that checks it (missing or null: refused).
    private mutating func unchecked(_ key: String) throws -> String {
        guard let value = take(key), value != .null else { throw FleetReportsError(.invalidField, "\(path)\(key): missing") }
        guard case .string(let s) = value else { throw FleetReportsError(.invalidField, "\(path)\(key): not a string") }
        return s
    }

    /// A device id, checked once as it becomes a ``DeviceID``.
    mutating func deviceID(_ key: String) throws -> DeviceID {
        let text = try unchecked(key)
        guard let id = DeviceID(text) else { throw FleetReportsError(.invalidField, "\(path)\(key): not \(DeviceID.hexDigits) lowercase hex digits") }
        return id
    }

    /// A device's public key, checked once as it becomes a ``DevicePublicKey``.
    mutating func deviceKey(_ key: String) throws -> DevicePublicKey {
        let text = try unchecked(key)
        guard let publicKey = DevicePublicKey(hex: text) else {
            throw FleetReportsError(.invalidField, "\(path)\(key): not \(DevicePublicKey.hexDigits) lowercase hex digits")
        }
        return publicKey
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int64>) throws -> Int64 {
        guard let value = try optionalInteger(key, in: range) else { throw FleetReportsError(.invalidField, "\(path)\(key): missing") }
        return value
    }

    mutating func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let value = take(key), value != .null else { return nil }
        guard case .integer(let n) = value else { throw FleetReportsError(.invalidField, "\(path)\(key): not an integer") }
        guard range.contains(n) else {
            throw FleetReportsError(.invalidField, "\(path)\(key): \(n) is outside \(range.lowerBound)…\(range.upperBound)")
        }
        return n
    }

    mutating func bool(_ key: String) throws -> Bool {
        guard let value = take(key) else { throw FleetReportsError(.invalidField, "\(path)\(key): missing") }
        guard case .bool(let b) = value else { throw FleetReportsError(.invalidField, "\(path)\(key): not true or false") }
        return b
    }

    mutating func array(_ key: String) throws -> [JSONValue] {
        guard let value = take(key) else { throw FleetReportsError(.invalidField, "\(path)\(key): missing") }
        guard case .array(let a) = value else { throw FleetReportsError(.invalidField, "\(path)\(key): not an array") }
        return a
    }

    /// Throws when a member was not read: unknown fields are refused.
    func noneLeft() throws {
        if let key = members.keys.sorted().first {
            throw FleetReportsError(.invalidField, "\(path)\(Self.printable(key)): unknown field")
        }
    }

    static func printable(_ key: String) -> String {
        key.utf8.count <= 40 && key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) ? key : "(a field name)"
    }

    static func problem(_ s: String, _ rule: Rule) -> String? {
        let bytes = Array(s.utf8)
        func only(_ max: Int, _ allowed: (UInt8) -> Bool, _ what: String) -> String? {
            guard !bytes.isEmpty else { return "empty" }
            guard bytes.count <= max else { return "\(bytes.count) bytes, more than \(max)" }
            return bytes.allSatisfy(allowed) ? nil : "not \(what)"
        }
        let alnum: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) }
        switch rule {
        case .hex(let digits):
            return LowerHex.matches(bytes, count: digits) ? nil : "not \(digits) lowercase hex digits"
        case .identifier(let max):
            return only(max, { alnum($0) || $0 == 0x2e || $0 == 0x5f || $0 == 0x2d }, "an identifier (letters, digits, . _ -)")
        case .version:
            return only(64, { alnum($0) || $0 == 0x2e || $0 == 0x2b || $0 == 0x2d || $0 == 0x5f }, "a version")
        case .word:
            return only(32, { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }, "a lowercase word")
        case .text(let max):
            guard bytes.count <= max else { return "\(bytes.count) bytes, more than \(max)" }
            return s.unicodeScalars.contains(where: TerminalText.isControl) ? "has control characters (C0, C1 or bidi)" : nil
        }
    }
}
