import FleetReports
import Foundation
import RolloutGuard

/// The collector's `GET /v1/guard` as the guard's fleet (`clientctl rollout guard`): the
/// query and the reading of its answer are ``RolloutGuard/GuardQuery``'s, the request this
/// client's.
struct CollectorGuardFleet: GuardFleet {
    let client: CollectorClient

    /// - Throws: what ``CollectorClient/get(_:_:)`` throws; ``RolloutGuard/GuardError``
    ///   `.rejected` (65) for an answer that is not the guard's figures, or not of the cohort
    ///   asked for.
    func figures(_ query: GuardQuery) async throws -> GuardFigures {
        try query.figures(inCollectorAnswer: try await client.get("v1/guard", query.collectorItems))
    }
}
