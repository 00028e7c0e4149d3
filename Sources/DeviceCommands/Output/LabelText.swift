import DeviceIdentity
import DeviceTargeting

/// What `clientctl label set|unset` says on stderr.
enum LabelText {
    /// `labels: a=1, b=2 (was: a=1)`, or that nothing changed.
    static func changed(_ before: DeviceLabels, _ after: DeviceLabels) -> String {
        func text(_ labels: DeviceLabels) -> String {
            labels.isEmpty ? "none" : labels.sorted.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        }
        if before == after { return "labels unchanged: \(text(after))" }
        return "labels: \(text(after)) (was: \(text(before))); a running agent reads them at its next check"
    }
}
