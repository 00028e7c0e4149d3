import ClientFoundation
import DeviceIdentity

/// Which devices a release is for: an expression over a device's labels and id, signed with the release and
/// evaluated by each device itself (``admits(_:inCohort:)``).
///
/// Grammar (EBNF):
/// ```
/// expression  = disjunction
/// disjunction = conjunction { "or" conjunction }
/// conjunction = negation { "and" negation }
/// negation    = "not" negation | primary
/// primary     = "(" expression ")" | test
/// test        = operand "=" value | operand "!=" value
///             | operand "in" list | operand "not" "in" list
///             | "id" "in" "cohort" name
/// operand     = "id" | key
/// list        = "(" value { "," value } ")"
/// ```
/// Keywords are lowercase and case-sensitive. A `key` follows the label key grammar of ``DeviceLabels``;
/// `id` is the device id and its values must be 32 lowercase hex digits; other values follow the label value
/// grammar; a cohort `name` follows the label key grammar and cannot be a keyword (`and`, `cohort`, `id`, `in`,
/// `not`, `or`). Tokens are separated by optional spaces; `=`, `!=`, `(`, `)` and `,` are tokens of their own,
/// so `store=12` and `store = 12` parse alike. Any character outside printable ASCII and space is refused.
///
/// Meaning: `not` binds tighter than `and`, `and` tighter than `or`. For a device without the label, `=` and
/// `in` are false, `!=` and `not in` are true. `id in cohort NAME` asks the caller whether the device is in
/// the cohort.
///
/// Bounds: at most ``maxBytes`` bytes of text and of its canonical text (``description``, which may be longer:
/// `a=1` is `a = 1`), ``maxDepth`` levels of parentheses and `not`, ``maxValues``
/// values in all lists together and ``maxCohorts`` distinct cohorts; empty or blank text is refused.
///
/// ``description`` is the canonical text: tokens separated by single spaces, except none after `(` or before
/// `)` or `,`, and parentheses only where precedence needs them (`store in (12, 14) and not ring = beta`).
/// Equality is of the parsed expression, `and` and `or` being associative: `store=12` equals `store = 12`,
/// and `(a = 1 and b = 2) and c = 3` equals `a = 1 and (b = 2 and c = 3)`.
public struct TargetExpression: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The most bytes of a target text, and of its canonical text.
    public static let maxBytes = 4096
    /// The most levels of parentheses and `not` around a test.
    public static let maxDepth = 16
    /// The most values in all lists of an expression together; a longer list of ids belongs in a cohort.
    public static let maxValues = 1000
    /// The most distinct cohorts an expression names.
    public static let maxCohorts = 8

    /// The parsed expression.
    let root: TargetNode

    init(root: TargetNode) {
        self.root = root
    }

    /// Parses a target text.
    /// - Throws: ``DeviceTargetingError`` ``DeviceTargetingErrorCode/invalidTarget``, one line that starts with
    ///   `target '<text>': ` and says what was expected and at which 1-based character, such as
    ///   `target 'store in (12,': expected a value at character 14, got the end`.
    public init(parsing text: String) throws {
        root = try TargetParser.parse(text)
    }

    /// The canonical text, which parses to an equal expression.
    public var description: String { root.canonical }

    /// The label keys the expression reads, sorted, each once.
    public var labelKeys: [String] {
        let keys = root.tests.compactMap { test -> String? in
            if case .label(let key) = test.operand { return key }
            return nil
        }
        return Set(keys).sorted()
    }

    /// The cohorts the expression names, sorted, each once.
    public var cohorts: [String] {
        let names = root.tests.compactMap { test -> String? in
            if case .inCohort(let name) = test { return name }
            return nil
        }
        return Set(names).sorted()
    }

    /// Why `name` cannot name a cohort (the label key grammar, not a keyword), or nil when it can.
    public static func cohortNameProblem(_ name: String) -> String? {
        if TargetParser.keywords.contains(name) { return "is a keyword of the target language" }
        return DeviceLabels.nameProblem(name)
    }

    /// Whether the expression reads the device id: compares it or asks whether it is in a cohort.
    public var readsDeviceId: Bool {
        root.tests.contains { $0.operand == .id }
    }

    /// Whether the expression admits the device.
    ///
    /// Each `and` and `or` first evaluates its parts that ask no cohort, then the others left to right, and
    /// stops as soon as its value is known, so `inCohort` is called only for a cohort whose answer matters.
    /// - Parameter inCohort: whether the device is in the named cohort.
    /// - Throws: what `inCohort` throws.
    public func admits(_ device: TargetDevice, inCohort: (String) throws -> Bool) rethrows -> Bool {
        try root.evaluate(device, inCohort)
    }

    /// Whether the expression admits the device, for an expression that names no cohort: a cohort test is false.
    public func admits(_ device: TargetDevice) -> Bool {
        root.evaluate(device) { _ in false }
    }

    /// The device's values of what the expression reads, to show why it was admitted or not: each label in the
    /// order the expression first reads it, `store=7` or `ring unset`, joined by `, `, then `id 0123abcd…` (the
    /// first 8 characters) when the expression reads the id: `store=7, ring unset, id 0123abcd…`.
    public func explain(_ device: TargetDevice) -> String {
        var seen: Set<String> = []
        var parts: [String] = []
        for test in root.tests {
            guard case .label(let key) = test.operand, seen.insert(key).inserted else { continue }
            parts.append(device.labels[key].map { "\(key)=\($0)" } ?? "\(key) unset")
        }
        if readsDeviceId {
            parts.append(device.id.map { "id " + Quoting.escaped($0.text, limit: 8) } ?? "id unset")
        }
        return parts.joined(separator: ", ")
    }

    /// Both expressions must hold: `a` narrowed by a restriction `b`. An `or` on either side is parenthesized:
    /// `and(store = 12 or store = 14, ring = beta)` is `(store = 12 or store = 14) and ring = beta`.
    ///
    /// The result is not checked against the bounds: when `a` and `b` together exceed them, its
    /// ``description`` is refused by ``init(parsing:)``.
    public static func and(_ a: TargetExpression, _ b: TargetExpression) -> TargetExpression {
        TargetExpression(root: .conjunction([a.root, b.root]))
    }
}
