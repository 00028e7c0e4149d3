import AppPackaging
import ArgumentParser

/// `package --apt-repo URL --apt-suite NAME --apt-key PUBLIC.asc`: the apt repository the
/// package names as its own source (docs/packaging.md#updates-through-apt).
struct AptSourceOptions: ParsableArguments {
    @Option(
        name: .customLong("apt-repo"),
        help: ArgumentHelp("URL of the apt repository the package names as its source (clientctl repo).", valueName: "URL"))
    var aptRepo: String?
    @Option(name: .customLong("apt-suite"), help: ArgumentHelp("With --apt-repo: the suite, e.g. stable.", valueName: "NAME"))
    var aptSuite: String?
    @Option(
        name: .customLong("apt-key"), help: ArgumentHelp("With --apt-repo: the repository's public OpenPGP key.", valueName: "PUBLIC.asc"))
    var aptKey: String?

    /// Refuses one or two of the three flags; called by `package`'s `validate()` in its order.
    /// - Throws: `ValidationError`.
    func check() throws {
        let apt = [aptRepo, aptSuite, aptKey].compactMap { $0 }
        guard apt.isEmpty || apt.count == 3 else {
            throw ValidationError("--apt-repo, --apt-suite and --apt-key go together: the source, its suite and the key it is signed with")
        }
    }

    /// The apt source of the three flags (all three, checked by ``check()``), or nil.
    var source: AptSource? {
        guard let aptRepo, let aptSuite, let aptKey else { return nil }
        return AptSource(url: aptRepo, suite: aptSuite, keyFile: aptKey)
    }
}
