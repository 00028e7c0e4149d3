import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation

/// `clientctl repo sign --repo DIR --gpg-key FILE`: every suite signed again.
struct RepoSignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign every suite of an apt repository again (a new Valid-Until).",
        discussion: """
            Exports every suite's indexes and signs its Release again, changing no package: \
            each Valid-Until moves --valid-for days ahead. Run it from a timer more often \
            than that, or apt refuses the repository once it passes (by design: a mirror \
            that stopped being updated is noticed).

            Examples:
              clientctl repo sign --repo apt --gpg-key keys/archive.asc
            """
    )

    @Option(help: ArgumentHelp("The repository folder.", valueName: "DIR"))
    var repo: String
    @Option(
        name: .customLong("gpg-key"),
        help: ArgumentHelp("The signing key: an OpenPGP secret key without a passphrase (armored).", valueName: "FILE"))
    var gpgKey: String
    @Option(
        name: .customLong("valid-for"),
        help: ArgumentHelp("Days each Release stays valid (Valid-Until); the repository's setting when absent.", valueName: "DAYS"))
    var validFor: Int?

    func validate() throws {
        if let validFor, !(1...3650).contains(validFor) { throw ValidationError("--valid-for must be 1 to 3650 days") }
    }

    func run() async throws {
        try await runReportingErrors {
            let suites = try AptRepository.sign(repo: repo, keyFile: gpgKey, settings: AptRepository.Settings(validForDays: validFor))
            print("signed \(suites.joined(separator: ", ")) of \(repo)")
        }
    }
}
