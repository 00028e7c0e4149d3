import ClientFoundation
import DeviceIdentity

/// Targets about the devices that carry some labels: what the rollout guard narrows a release
/// by when it halts it for one group of devices (docs/fleet-reports.md#the-rollout-guard).
extension TargetExpression {
    /// Every device but those whose labels include all of `labels`: `not store = 12`, or
    /// `not (ring = beta and store = 12)` for two (keys in byte order).
    /// - Throws: ``DeviceTargetingError`` ``DeviceTargetingErrorCode/invalidLabel`` for no
    ///   label or a key or value outside the label grammar.
    public static func excluding(labels: [String: String]) throws -> TargetExpression {
        guard !labels.isEmpty else {
            throw DeviceTargetingError(.invalidLabel, "labels: none given, so every device would be left out")
        }
        let tests = try labels.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { key, value -> TargetNode in
            if let why = DeviceLabels.keyProblem(key) { throw DeviceTargetingError(.invalidLabel, "label key \(Quoting.quoted(key)): \(why)") }
            if let why = DeviceLabels.valueProblem(value) {
                throw DeviceTargetingError(.invalidLabel, "label value \(Quoting.quoted(value)): \(why)")
            }
            return .test(.equals(.label(key), value))
        }
        return TargetExpression(root: .not(.conjunction(tests)))
    }

    /// Whether the expression admits no device whose labels include every one of `labels`,
    /// whatever its other labels, its id and the cohorts it is in.
    ///
    /// Each test is read with what the labels tell (Kleene's three values): a test of a key
    /// in `labels` is true or false, any other test (another key, the id, a cohort) unknown;
    /// `not` keeps unknown, `and` is false when one part is, `or` when all are. True only
    /// when the whole is false: sound (it never says so of an expression that admits such a
    /// device), not complete (`store = 1 and store = 2` admits nobody, yet with no `store`
    /// among `labels` it is unknown).
    public func admitsNone(labelled labels: [String: String]) -> Bool {
        root.value(knowing: labels) == false
    }
}

extension TargetNode {
    /// The node's value for every device with `labels`: nil when it depends on more.
    func value(knowing labels: [String: String]) -> Bool? {
        switch self {
        case .test(let test):
            return test.value(knowing: labels)
        case .not(let inner):
            return inner.value(knowing: labels).map { !$0 }
        case .and(let parts):
            var known = true
            for part in parts {
                switch part.value(knowing: labels) {
                case false?: return false
                case nil: known = false
                case true?: break
                }
            }
            return known ? true : nil
        case .or(let parts):
            var known = true
            for part in parts {
                switch part.value(knowing: labels) {
                case true?: return true
                case nil: known = false
                case false?: break
                }
            }
            return known ? false : nil
        }
    }
}

extension TargetTest {
    /// The test's value for every device with `labels`: nil unless it reads one of them.
    func value(knowing labels: [String: String]) -> Bool? {
        guard case .label(let key) = operand, let value = labels[key] else { return nil }
        switch self {
        case .equals(_, let expected): return value == expected
        case .notEquals(_, let expected): return value != expected
        case .isIn(_, let values): return values.contains(value)
        case .notIn(_, let values): return !values.contains(value)
        case .inCohort: return nil
        }
    }
}
