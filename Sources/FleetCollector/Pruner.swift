import Foundation

/// When to prune and what: reports received more than `retentionDays` ago are deleted
/// every `interval` seconds (hourly). A pure state machine: the caller passes the time.
public struct PruneSchedule: Sendable, Equatable {
    /// Days a report is kept.
    public let retentionDays: Int
    /// Seconds between prunings.
    public let interval: TimeInterval
    /// When the next pruning is due (`nil`: at once).
    public private(set) var nextDue: Date?

    /// A schedule keeping `retentionDays` days, pruning every `interval` seconds.
    public init(retentionDays: Int, interval: TimeInterval = 3600) {
        self.retentionDays = retentionDays
        self.interval = interval
    }

    /// The cutoff to prune before, when a pruning is due at `now` (and the next is then scheduled).
    public mutating func due(at now: Date) -> Date? {
        if let nextDue, now < nextDue { return nil }
        nextDue = now.addingTimeInterval(interval)
        return now.addingTimeInterval(-Double(retentionDays) * 86_400)
    }
}
