/// What a test compares: the device id or one of its labels.
enum TargetOperand: Hashable, Sendable {
    /// The device id (`id`).
    case id
    /// The label with this key.
    case label(String)

    /// The operand as written: `id` or the key.
    var text: String {
        switch self {
        case .id: return "id"
        case .label(let key): return key
        }
    }

    /// The device's value of the operand, nil for a label it does not have.
    func value(of device: TargetDevice) -> String? {
        switch self {
        case .id: return device.id?.text
        case .label(let key): return device.labels[key]
        }
    }
}

/// One test of a target expression.
enum TargetTest: Hashable, Sendable {
    /// `operand = value`: false for a missing label.
    case equals(TargetOperand, String)
    /// `operand != value`: true for a missing label.
    case notEquals(TargetOperand, String)
    /// `operand in (values)`: false for a missing label.
    case isIn(TargetOperand, [String])
    /// `operand not in (values)`: true for a missing label.
    case notIn(TargetOperand, [String])
    /// `id in cohort name`: asks the caller.
    case inCohort(String)

    /// The operand the test reads; `id` for a cohort test.
    var operand: TargetOperand {
        switch self {
        case .equals(let operand, _), .notEquals(let operand, _), .isIn(let operand, _), .notIn(let operand, _): return operand
        case .inCohort: return .id
        }
    }

    /// The canonical text: `store = 12`, `store != 12`, `store in (12, 14)`, `store not in (12, 14)`,
    /// `id in cohort pilot`.
    var canonical: String {
        switch self {
        case .equals(let operand, let value): return "\(operand.text) = \(value)"
        case .notEquals(let operand, let value): return "\(operand.text) != \(value)"
        case .isIn(let operand, let values): return "\(operand.text) in (\(values.joined(separator: ", ")))"
        case .notIn(let operand, let values): return "\(operand.text) not in (\(values.joined(separator: ", ")))"
        case .inCohort(let name): return "id in cohort \(name)"
        }
    }

    /// Whether the device passes the test; only a cohort test calls `inCohort`.
    func evaluate(_ device: TargetDevice, _ inCohort: (String) throws -> Bool) rethrows -> Bool {
        switch self {
        case .equals(let operand, let value): return operand.value(of: device) == value
        case .notEquals(let operand, let value): return operand.value(of: device) != value
        case .isIn(let operand, let values): return operand.value(of: device).map(values.contains) ?? false
        case .notIn(let operand, let values): return !(operand.value(of: device).map(values.contains) ?? false)
        case .inCohort(let name): return try inCohort(name)
        }
    }
}

/// A parsed target expression. `and` and `or` hold two or more parts, none of them of their own kind
/// (``conjunction(_:)`` and ``disjunction(_:)`` flatten), so `(a and b) and c` and `a and (b and c)`
/// are the same tree.
enum TargetNode: Hashable, Sendable {
    /// A test.
    case test(TargetTest)
    /// `not` the part.
    indirect case not(TargetNode)
    /// All parts hold.
    case and([TargetNode])
    /// One of the parts holds.
    case or([TargetNode])

    /// The parts joined by `and`, flattening parts that are `and`s; a single part is itself.
    static func conjunction(_ parts: [TargetNode]) -> TargetNode {
        let flat = parts.flatMap { part -> [TargetNode] in
            if case .and(let inner) = part { return inner }
            return [part]
        }
        return flat.count == 1 ? flat[0] : .and(flat)
    }

    /// The parts joined by `or`, flattening parts that are `or`s; a single part is itself.
    static func disjunction(_ parts: [TargetNode]) -> TargetNode {
        let flat = parts.flatMap { part -> [TargetNode] in
            if case .or(let inner) = part { return inner }
            return [part]
        }
        return flat.count == 1 ? flat[0] : .or(flat)
    }

    /// The canonical text, with parentheses only where precedence (not > and > or) needs them.
    var canonical: String {
        switch self {
        case .test(let test):
            return test.canonical
        case .not(let inner):
            switch inner {
            case .and, .or: return "not (\(inner.canonical))"
            case .test, .not: return "not \(inner.canonical)"
            }
        case .and(let parts):
            return parts.map { part in
                if case .or = part { return "(\(part.canonical))" }
                return part.canonical
            }.joined(separator: " and ")
        case .or(let parts):
            return parts.map(\.canonical).joined(separator: " or ")
        }
    }

    /// Every test, left to right.
    var tests: [TargetTest] {
        switch self {
        case .test(let test): return [test]
        case .not(let inner): return inner.tests
        case .and(let parts), .or(let parts): return parts.flatMap(\.tests)
        }
    }

    /// Whether a cohort test is part of this node.
    var asksCohort: Bool {
        switch self {
        case .test(.inCohort): return true
        case .test: return false
        case .not(let inner): return inner.asksCohort
        case .and(let parts), .or(let parts): return parts.contains(where: \.asksCohort)
        }
    }

    /// Whether the device passes; parts without a cohort test are evaluated first, then the others left to
    /// right, each `and` and `or` stopping as soon as its value is known, so `inCohort` is called only for a
    /// cohort whose answer decides.
    func evaluate(_ device: TargetDevice, _ inCohort: (String) throws -> Bool) rethrows -> Bool {
        switch self {
        case .test(let test):
            return try test.evaluate(device, inCohort)
        case .not(let inner):
            return try !inner.evaluate(device, inCohort)
        case .and(let parts):
            for part in Self.cohortsLast(parts) {
                if try !part.evaluate(device, inCohort) { return false }
            }
            return true
        case .or(let parts):
            for part in Self.cohortsLast(parts) {
                if try part.evaluate(device, inCohort) { return true }
            }
            return false
        }
    }

    /// The parts without a cohort test, then those with one, each in their order.
    private static func cohortsLast(_ parts: [TargetNode]) -> [TargetNode] {
        parts.filter { !$0.asksCohort } + parts.filter(\.asksCohort)
    }
}
