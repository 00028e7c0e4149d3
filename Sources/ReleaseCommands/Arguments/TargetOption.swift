import ArgumentParser
import DeviceTargeting

/// `--target EXPR` of `publish` and `rollout set`: which devices a release is for, in the
/// target language (docs/targeting.md), read in `validate()` so a bad one is one line,
/// exit 64, before anything is signed.
struct TargetOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Which devices the release is for, e.g. 'store in (12, 14)' or 'ring = beta and not site = lobby' (docs/targeting.md).",
            valueName: "EXPR"))
    var target: String?

    /// The expression, or nil when `--target` is not given.
    /// - Throws: `ValidationError` naming what does not parse.
    func expression() throws -> TargetExpression? {
        guard let target else { return nil }
        do {
            return try TargetExpression(parsing: target)
        } catch let error as DeviceTargetingError {
            throw ValidationError("--target: \(error.message)")
        }
    }
}
