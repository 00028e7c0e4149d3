/// A JSON value as parsed by `StrictJSON`.
///
/// Numbers keep their kind: a number written without fraction or exponent within
/// ±(2⁵³−1) (the I-JSON range RFC 8785 relies on) is an exact ``integer(_:)``; any other number
/// is a ``double(_:)``. Schemas that require an integer (a manifest's `size`) accept only
/// ``integer(_:)``.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent.
    case integer(Int64)
    /// A number written with a fraction or an exponent.
    case double(Double)
    /// A string (any Unicode text; lone surrogates are refused when parsing).
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in document order.
    case object(JSONObject)

    /// The largest integer magnitude RFC 8785 / I-JSON can carry exactly (2⁵³−1).
    public static let maxSafeInteger: Int64 = 9_007_199_254_740_991

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, when this is an integer.
    public var integerValue: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// A short name of the value's type for error messages (`string`, `object`…).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A JSON object that keeps its members in the order they were read or inserted.
///
/// Keys are unique: `StrictJSON` refuses duplicates, and ``subscript(_:)`` replaces.
/// Two objects are equal when they hold the same keys with equal values, in any order.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One `"key": value` member.
    public struct Member: Sendable, Equatable {
        /// The member name.
        public var key: String
        /// The member value.
        public var value: JSONValue
        /// A member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() { members = [] }

    /// An object with these members; later duplicates replace earlier ones.
    public init(_ pairs: [(String, JSONValue)]) {
        members = []
        for (k, v) in pairs { self[k] = v }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// The member keys in order.
    public var keys: [String] { members.map(\.key) }

    /// Number of members.
    public var count: Int { members.count }

    /// The value of `key`, or `nil`; setting `nil` removes the member, setting a new key
    /// appends it, setting an existing key replaces its value in place.
    ///
    /// Keys compare by their Unicode scalars, exactly (no normalization).
    public subscript(key: String) -> JSONValue? {
        get { members.first { Self.same($0.key, key) }?.value }
        set {
            if let i = members.firstIndex(where: { Self.same($0.key, key) }) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Removes `key` and returns its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let i = members.firstIndex(where: { Self.same($0.key, key) }) else { return nil }
        return members.remove(at: i).value
    }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        return lhs.members.allSatisfy { m in rhs[m.key] == m.value }
    }

    static func same(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.elementsEqual(b.unicodeScalars)
    }

    /// Makes room for `count` members (the parser, before the first).
    mutating func reserveCapacity(_ count: Int) {
        members.reserveCapacity(count)
    }

    /// Appends without checking for duplicates (the parser checks itself).
    mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }
}
