import ArgumentParser
import ClientFoundation
import CommandSupport
import SignedManifest

/// Where a release's rollout draws its devices (`--draw`, `--draw-from`) and which older
/// releases are offered beside it (`--alongside`): docs/targeting.md#two-releases-at-once.
struct PlacementOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "An older release of the channel offered beside this one, to the devices this one is not for; repeat (at most 4).",
            valueName: "VERSION"))
    var alongside: [Version] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The draw the rollout takes its devices in (default: the release's own; with --alongside, that of the partial release beside it).",
            valueName: "NAME"))
    var draw: String?

    @Option(
        name: .customLong("draw-from"),
        help: ArgumentHelp("Where in the draw the rollout's places begin, in percent (default 0).", valueName: "PERCENT"))
    var drawFrom: Double?

    /// Refuses a bad draw name or offset.
    func validate() throws {
        if let draw, let problem = Rollout.drawProblem(draw) { throw ValidationError("--draw '\(draw)' \(problem)") }
        if let drawFrom, !(drawFrom.isFinite && (0..<100).contains(drawFrom)) {
            throw ValidationError("--draw-from takes a percent from 0 to less than 100, not \(drawFrom)")
        }
    }

    /// True when `--draw` or `--draw-from` is given (they need a rollout).
    var placesRollout: Bool { draw != nil || drawFrom != nil }

    /// `rollout` placed where `--draw` and `--draw-from` say.
    /// - Throws: `ValidationError` when the places run past 100 %.
    func placed(_ rollout: Rollout) throws -> Rollout {
        var r = rollout
        if let draw { r.draw = draw }
        if let drawFrom { r.from = drawFrom }
        guard r.from + r.highestPercent <= 100 else {
            throw ValidationError("--draw-from \(r.from) with a rollout up to \(r.highestPercent) % runs past 100 %")
        }
        return r
    }
}
