import ClientFoundation
import DeviceIdentity
import StrictJSON

/// Reads the members of one object, each once, and says which are left over.
///
/// A report has at most 15 members: a scan of them (from where the last one read was, since
/// members mostly come in the order they are read) is cheaper than hashing every key, and the
/// path of a field is spelled only when an error names it.
struct FieldReader {
    private let members: [JSONObject.Member]
    /// Bit `j`: `members[j]` was read (the first 64 members).
    private var taken: UInt64 = 0
    /// Whether each member past the 64th was read (empty for smaller objects).
    private var takenBeyond: [Bool]
    /// Where the next scan starts: right after the last member read.
    private var cursor = 0
    /// Where the object is, for error messages.
    let place: Place

    /// Where an object read by a ``FieldReader`` is in its document.
    enum Place {
        /// The batch object itself.
        case batch
        /// A report.
        case report(ReportPlace)
        /// A report's `rollout`.
        case rollout(ReportPlace)

        /// What comes before a member's name in an error message (`reports[3].`).
        var prefix: String {
            switch self {
            case .batch: return ""
            case .report(let report): return "\(report.path)."
            case .rollout(let report): return "\(report.path).rollout."
            }
        }
    }

    /// Where a report is: an element of a batch's `reports`, or one named by its reader.
    enum ReportPlace {
        /// `reports[index]`.
        case element(Int)
        /// A report read alone (a journal line): its name.
        case named(String)

        /// The report's path in error messages.
        var path: String {
            switch self {
            case .element(let index): return "reports[\(index)]"
            case .named(let name): return name
            }
        }
    }

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

    init(_ object: JSONObject, at place: Place) {
        members = object.members
        takenBeyond = members.count > 64 ? Array(repeating: false, count: members.count - 64) : []
        self.place = place
    }

    /// `key`'s name in an error message (`reports[3].seq`).
    func path(_ key: String) -> String { place.prefix + key }

    private func isTaken(_ j: Int) -> Bool { j < 64 ? taken & (1 << UInt64(j)) != 0 : takenBeyond[j - 64] }

    /// The member named `key` (names compare as Swift strings do, by canonical equivalence,
    /// as a dictionary's keys would), once: a second take of the same name finds nothing.
    mutating func take(_ key: String) -> JSONValue? {
        let count = members.count
        var j = cursor
        for _ in 0..<count {
            if j == count { j = 0 }
            if !isTaken(j), members[j].key == key {
                if j < 64 { taken |= 1 << UInt64(j) } else { takenBeyond[j - 64] = true }
                cursor = j + 1
                return members[j].value
            }
            j += 1
        }
        return nil
    }

    /// A member that is present and not null.
    private mutating func present(_ key: String) -> JSONValue? {
        guard let value = take(key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    mutating func string(_ key: String, rule: Rule) throws -> String {
        guard let value = try optionalString(key, rule: rule) else { throw FleetReportsError(.invalidField, "\(path(key)): missing") }
        return value
    }

    mutating func optionalString(_ key: String, rule: Rule) throws -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let s) = value else { throw FleetReportsError(.invalidField, "\(path(key)): not a string") }
        if let why = Self.problem(s, rule) { throw FleetReportsError(.invalidField, "\(path(key)): \(why)") }
        return s
    }

    /// A string member as it is, for a type that checks it (missing or null: refused).
    private mutating func unchecked(_ key: String) throws -> String {
        guard let value = present(key) else { throw FleetReportsError(.invalidField, "\(path(key)): missing") }
        guard case .string(let s) = value else { throw FleetReportsError(.invalidField, "\(path(key)): not a string") }
        return s
    }

    /// A device id, checked once as it becomes a ``DeviceID``.
    mutating func deviceID(_ key: String) throws -> DeviceID {
        let text = try unchecked(key)
        guard let id = DeviceID(text) else { throw FleetReportsError(.invalidField, "\(path(key)): not \(DeviceID.hexDigits) lowercase hex digits") }
        return id
    }

    /// A device's public key, checked once as it becomes a ``DevicePublicKey``.
    mutating func deviceKey(_ key: String) throws -> DevicePublicKey {
        let text = try unchecked(key)
        guard let publicKey = DevicePublicKey(hex: text) else {
            throw FleetReportsError(.invalidField, "\(path(key)): not \(DevicePublicKey.hexDigits) lowercase hex digits")
        }
        return publicKey
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int64>) throws -> Int64 {
        guard let value = try optionalInteger(key, in: range) else { throw FleetReportsError(.invalidField, "\(path(key)): missing") }
        return value
    }

    mutating func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .integer(let n) = value else { throw FleetReportsError(.invalidField, "\(path(key)): not an integer") }
        guard range.contains(n) else {
            throw FleetReportsError(.invalidField, "\(path(key)): \(n) is outside \(range.lowerBound)…\(range.upperBound)")
        }
        return n
    }

    mutating func bool(_ key: String) throws -> Bool {
        guard let value = take(key) else { throw FleetReportsError(.invalidField, "\(path(key)): missing") }
        guard case .bool(let b) = value else { throw FleetReportsError(.invalidField, "\(path(key)): not true or false") }
        return b
    }

    mutating func array(_ key: String) throws -> [JSONValue] {
        guard let value = take(key) else { throw FleetReportsError(.invalidField, "\(path(key)): missing") }
        guard case .array(let a) = value else { throw FleetReportsError(.invalidField, "\(path(key)): not an array") }
        return a
    }

    /// Throws when a member was not read: unknown fields are refused (the first of them in
    /// string order is named).
    func noneLeft() throws {
        var first: String?
        for j in members.indices where !isTaken(j) {
            let key = members[j].key
            if let known = first, !(key < known) { continue }
            first = key
        }
        if let key = first {
            throw FleetReportsError(.invalidField, "\(path(Self.printable(key))): unknown field")
        }
    }

    static func printable(_ key: String) -> String {
        key.utf8.count <= 40 && key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) ? key : "(a field name)"
    }

    static func problem(_ s: String, _ rule: Rule) -> String? {
        if let result = s.utf8.withContiguousStorageIfAvailable({ problem(s, $0, rule) }) { return result }
        return Array(s.utf8).withUnsafeBufferPointer { problem(s, $0, rule) }
    }

    /// What is wrong with `s`, whose UTF-8 is `bytes`, under `rule`; nil when nothing is.
    private static func problem(_ s: String, _ bytes: UnsafeBufferPointer<UInt8>, _ rule: Rule) -> String? {
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
