import ArgumentParser
import SignedManifest

/// `publish --delta-bases K`: how many older releases get a delta patch to the new one
/// (docs/delta-updates.md).
struct DeltaOptions: ParsableArguments {
    @Option(
        name: .customLong("delta-bases"),
        help: ArgumentHelp("Older releases that get a delta patch to this one (0–32; 0: none).", valueName: "K"))
    var deltaBases = 3

    /// Refuses a count out of range; called by `publish`'s `validate()` in its order.
    /// - Throws: `ValidationError`.
    func check() throws {
        guard (0...ReleaseDelta.maxPatches).contains(deltaBases) else {
            throw ValidationError("--delta-bases must be 0 to \(ReleaseDelta.maxPatches), not \(deltaBases)")
        }
    }
}
