import FleetReports
import Foundation

/// Where the guard reads the fleet: the collector's `GET /v1/guard` in `clientctl rollout
/// guard`, anything that answers the same figures in a test or another host.
public protocol GuardFleet: Sendable {
    /// The figures of `query`'s versions, counting only what its window lets count, of the
    /// devices of its cohort only.
    /// - Throws: the source's own error (the collector unreachable, its token refused), or
    ///   ``GuardError`` `.rejected` for an answer that is not the guard's figures (nor of
    ///   the cohort asked for).
    func figures(_ query: GuardQuery) async throws -> GuardFigures
}

/// What a pass asks the fleet (docs/fleet-reports.md#the-rollout-guard).
public struct GuardQuery: Sendable, Equatable {
    /// The app and channel of the release judged.
    public var app: String
    public var channel: String
    /// The version rolled out, then with a baseline the previous published one.
    public var versions: [String]
    /// Under open admission, only devices first heard from before this count.
    public var trustedBefore: Date
    /// After a person resumed a rollout the guard halted: only reports received since.
    public var since: Date?
    /// Only devices whose latest labels include these count (`--label`); empty: every device.
    public var labels: LabelFilter

    public init(app: String, channel: String, versions: [String], trustedBefore: Date, since: Date?, labels: LabelFilter = LabelFilter()) {
        self.app = app
        self.channel = channel
        self.versions = versions
        self.trustedBefore = trustedBefore
        self.since = since
        self.labels = labels
    }
}
