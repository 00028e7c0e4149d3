import ArgumentParser
import Foundation

/// `rollout guard`'s collector: its base URL and the file of its read token, whose
/// `GET /v1/guard` is the guard's fleet (docs/fleet-reports.md#the-rollout-guard).
struct GuardCollectorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "URL"))
    var collector: String

    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the collector's read token.", valueName: "FILE"))
    var tokenFile: String

    /// The collector's figures as the guard's fleet.
    /// - Throws: ``CommandError`` `.invalidArgument` (64) for a `--collector` that is not a
    ///   URL; what ``FleetQuery/token(file:)`` throws.
    func fleet() throws -> CollectorGuardFleet {
        guard let url = URL(string: collector) else { throw CommandError(.invalidArgument, "--collector \(collector): not a URL") }
        return CollectorGuardFleet(client: CollectorClient(collector: url, token: try FleetQuery.token(file: tokenFile)))
    }
}
