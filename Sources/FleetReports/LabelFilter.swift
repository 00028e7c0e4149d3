import ClientFoundation
import DeviceIdentity
import DeviceTargeting

/// One cohort of a fleet: the devices whose latest labels include every label of the filter
/// (`clientctl fleet status --label store=12 --label ring=beta`, `GET /v1/fleet?label=store=12`;
/// docs/fleet-reports.md#one-cohorts-figures). The empty filter is every device.
///
/// Bounded: at most ``maxLabels`` labels, each `KEY=VALUE` of the label grammar
/// (`DeviceLabels`), one value per key (a device has one, so two could never both match).
public struct LabelFilter: Sendable, Equatable, CustomStringConvertible {
    /// The most labels one filter names.
    public static let maxLabels = 8

    /// The labels every device counted has, key to value.
    public private(set) var labels: [String: String]

    /// Every device.
    public init() {
        labels = [:]
    }

    /// The filter of `assignments`, each `KEY=VALUE` (a `--label` flag, a `label` query parameter).
    /// - Throws: ``FleetReportsError`` `.invalidField`, one line quoting the text and saying
    ///   why: `label 'store': not KEY=VALUE`, `label 'Store=1': the key must start with a
    ///   lowercase letter`, a key given twice, more than ``maxLabels``.
    public init(_ assignments: [String]) throws {
        guard assignments.count <= Self.maxLabels else {
            throw FleetReportsError(.invalidField, "label: \(assignments.count) labels, at most \(Self.maxLabels)")
        }
        var labels: [String: String] = [:]
        for text in assignments {
            let quoted = Quoting.quoted(text)
            guard let equals = text.firstIndex(of: "=") else {
                throw FleetReportsError(.invalidField, "label \(quoted): not KEY=VALUE")
            }
            let key = String(text[..<equals])
            let value = String(text[text.index(after: equals)...])
            if let why = DeviceLabels.keyProblem(key) { throw FleetReportsError(.invalidField, "label \(quoted): the key \(why)") }
            if let why = DeviceLabels.valueProblem(value) { throw FleetReportsError(.invalidField, "label \(quoted): the value \(why)") }
            guard labels[key] == nil else {
                throw FleetReportsError(.invalidField, "label \(quoted): the key '\(key)' is given twice (a device has one value per key)")
            }
            labels[key] = value
        }
        self.labels = labels
    }

    /// Whether the filter is every device.
    public var isEmpty: Bool { labels.isEmpty }

    /// The labels in key order.
    public var sorted: [(key: String, value: String)] {
        labels.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// The labels as `KEY=VALUE` texts, in key order (what ``init(_:)`` reads back).
    public var assignments: [String] { sorted.map { "\($0.key)=\($0.value)" } }

    /// The labels as `ring=beta,store=12`, in key order; empty for every device.
    public var description: String { Self.text(labels) }

    /// Labels (a device's, a filter's) as `ring=beta,store=12`, in key order; empty for none.
    public static func text(_ labels: [String: String]) -> String {
        labels.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    /// Whether `labels` include every label of the filter.
    public func matches(_ labels: DeviceLabels) -> Bool {
        self.labels.allSatisfy { labels[$0.key] == $0.value }
    }

    /// Per label, in key order, the text `"KEY":"VALUE"`: the canonical JSON of some labels
    /// (``ReportBatch/labelsJSON(_:)``) contains it exactly when they hold that label: no key
    /// or value holds a quote or a backslash, so the quotes of the text can only fall on a
    /// member's own, around a whole key and its whole value.
    public var patterns: [String] {
        sorted.map { ReportBatch.quote($0.key) + ":" + ReportBatch.quote($0.value) }
    }
}
