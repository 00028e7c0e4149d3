import ClientFoundation

/// A device's labels: `KEY=VALUE` pairs such as `store=12` or `ring=beta` that a release's target
/// expression reads (DeviceTargeting's `TargetExpression`).
///
/// Grammar:
/// - key: 1 to 63 characters, first a lowercase ASCII letter, then lowercase ASCII letters, digits,
///   `.`, `_`, `-`; the reserved words `id`, `cohort`, `and`, `or`, `not`, `in`, `true`, `false` are
///   refused as keys.
/// - value: 1 to 64 characters from ASCII letters, digits and `.` `_` `-` `:` `/` `+` `@`.
/// - at most 32 labels (``maxCount``).
///
/// Every way in (``init(_:)``, ``set(_:_:)``, decoding) checks the grammar, so a `DeviceLabels` value
/// always follows it. It encodes as a plain object of string to string: `{"ring": "beta", "store": "12"}`.
public struct DeviceLabels: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// The most labels a device has.
    public static let maxCount = 32
    /// The most characters of a key.
    public static let maxKeyLength = 63
    /// The most characters of a value.
    public static let maxValueLength = 64
    /// The words of the target language, refused as keys: `and`, `cohort`, `false`, `id`, `in`, `not`, `or`, `true`.
    public static let reservedWords: [String] = ["and", "cohort", "false", "id", "in", "not", "or", "true"]

    /// The labels, key to value.
    public private(set) var values: [String: String]

    /// No labels.
    public init() {
        values = [:]
    }

    /// The given labels, checked against the grammar.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidLabel`` naming the first bad key or
    ///   value (in key order), or saying there are more than ``maxCount``.
    public init(_ values: [String: String]) throws {
        if let problem = Self.problem(values) { throw DeviceIdentityError(.invalidLabel, problem) }
        self.values = values
    }

    /// Why `key` is not a label key, or nil when it is one: a short reason such as
    /// "must start with a lowercase letter" or "is reserved by the target language".
    public static func keyProblem(_ key: String) -> String? {
        if let problem = nameProblem(key) { return problem }
        if reservedWords.contains(key) { return "is reserved by the target language" }
        return nil
    }

    /// Why `value` is not a label value, or nil when it is one: a short reason such as
    /// "is 65 characters, at most 64".
    public static func valueProblem(_ value: String) -> String? {
        let scalars = value.unicodeScalars
        if scalars.isEmpty { return "is empty" }
        if scalars.count > maxValueLength { return "is \(scalars.count) characters, at most \(maxValueLength)" }
        if let bad = scalars.first(where: { !isValueCharacter($0) }) {
            return "has the character '\(Quoting.escaped(bad))' (allowed: letters, digits and . _ - : / + @)"
        }
        return nil
    }

    /// Splits a `KEY=VALUE` text at its `=` and checks both sides.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidLabel``, one line quoting the text:
    ///   `label 'store 12': expected KEY=VALUE`, `label key 'Store': must start with a lowercase letter`,
    ///   `label value '': is empty`.
    public static func parseAssignment(_ text: String) throws -> (key: String, value: String) {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].contains("=") else {
            throw DeviceIdentityError(.invalidLabel, "label \(Quoting.quoted(text)): expected KEY=VALUE")
        }
        let key = String(parts[0])
        let value = String(parts[1])
        try check(key, value)
        return (key, value)
    }

    /// Labels from `KEY=VALUE` texts (`--label` flags, `clientctl label set`), each key once.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidLabel`` for a text
    ///   ``parseAssignment(_:)`` refuses, a key given twice (`label 'store' is given twice: a
    ///   device has one value per key`) or one label too many.
    public init(assignments: [String]) throws {
        self.init()
        for text in assignments {
            let (key, value) = try Self.parseAssignment(text)
            if self[key] != nil {
                throw DeviceIdentityError(.invalidLabel, "label '\(key)' is given twice: a device has one value per key")
            }
            try set(key, value)
        }
    }

    /// Sets the label `key` to `value`, replacing its value when it is set already.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidLabel`` for a bad key or value, or
    ///   a new key when there are ``maxCount`` labels already (`label 'k': a device has at most 32 labels`).
    public mutating func set(_ key: String, _ value: String) throws {
        try Self.check(key, value)
        if values[key] == nil, values.count >= Self.maxCount {
            throw DeviceIdentityError(.invalidLabel, "label \(Quoting.quoted(key)): a device has at most \(Self.maxCount) labels")
        }
        values[key] = value
    }

    /// Removes the label `key`; returns whether it was set.
    @discardableResult
    public mutating func unset(_ key: String) -> Bool {
        values.removeValue(forKey: key) != nil
    }

    /// The value of the label `key`, or nil when it is not set.
    public subscript(key: String) -> String? { values[key] }

    /// Whether there are no labels.
    public var isEmpty: Bool { values.isEmpty }

    /// The number of labels.
    public var count: Int { values.count }

    /// The labels sorted by key.
    public var sorted: [(key: String, value: String)] {
        values.sorted { $0.key < $1.key }
    }

    /// The labels as `a=1,b=2`, sorted by key; empty when there are none.
    public var description: String {
        sorted.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    /// Decodes a plain object of string to string, refusing a bad key or value or more than ``maxCount`` labels
    /// with `DecodingError.dataCorrupted` whose description names the bad one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let values = try container.decode([String: String].self)
        if let problem = Self.problem(values) {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: problem)
        }
        self.values = values
    }

    /// Encodes the labels as a plain object of string to string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}

extension DeviceLabels {
    /// Why `name` does not follow the key grammar, reserved words aside (cohort names use it too).
    package static func nameProblem(_ name: String) -> String? {
        let scalars = name.unicodeScalars
        guard let first = scalars.first else { return "is empty" }
        if scalars.count > maxKeyLength { return "is \(scalars.count) characters, at most \(maxKeyLength)" }
        if !("a"..."z").contains(first) { return "must start with a lowercase letter" }
        if let bad = scalars.first(where: { !isKeyCharacter($0) }) {
            return "has the character '\(Quoting.escaped(bad))' (allowed: lowercase letters, digits and . _ -)"
        }
        return nil
    }

    /// Whether `scalar` may appear in a key: a lowercase ASCII letter, a digit, `.`, `_` or `-`.
    static func isKeyCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_" || scalar == "-"
    }

    /// Whether `scalar` may appear in a value: an ASCII letter, a digit, or one of `. _ - : / + @`.
    static func isValueCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || ".-_:/+@".unicodeScalars.contains(scalar)
    }

    /// Why `key=value` is not a label: a bad key first, then a bad value; nil when it is one.
    private static func labelProblem(_ key: String, _ value: String) -> String? {
        if let problem = keyProblem(key) { return "label key \(Quoting.quoted(key)): \(problem)" }
        if let problem = valueProblem(value) { return "label value \(Quoting.quoted(value)): \(problem)" }
        return nil
    }

    /// Refuses a bad key, then a bad value.
    private static func check(_ key: String, _ value: String) throws {
        if let problem = labelProblem(key, value) { throw DeviceIdentityError(.invalidLabel, problem) }
    }

    /// The first problem of a whole set of labels: too many, or a bad key or value in key order.
    private static func problem(_ values: [String: String]) -> String? {
        if values.count > maxCount { return "\(values.count) labels, at most \(maxCount)" }
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            if let problem = labelProblem(key, value) { return problem }
        }
        return nil
    }
}
