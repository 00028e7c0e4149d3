import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation

/// `clientctl repo phase PACKAGE PERCENT --repo DIR --suite NAME --gpg-key FILE`.
struct RepoPhaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phase",
        abstract: "Set the share of machines apt upgrades to a package's version in a suite.",
        discussion: """
            Sets PACKAGE's Phased-Update-Percentage in --suite's Packages index and signs \
            every suite again. apt 2.1.16 and later (Debian 12 has 2.6) then upgrades a \
            machine only when a value drawn from its machine ID, the package and the version \
            falls within PERCENT: raise it step by step (10, 50, 100) as the fleet reports stay \
            good; 0 stops the version reaching more machines. Machines that installed it \
            keep it; a new install takes the suite's version whatever the phase. Older apt, \
            apt told APT::Get::Always-Include-Phased-Updates, and a machine without \
            /etc/machine-id upgrade regardless. \
            The setting stays with the package across versions (repo add --phase sets it \
            anew) and goes with repo remove. A suite that does not hold PACKAGE: exit 66.

            Examples:
              clientctl repo phase notes 10 --repo apt --suite stable \\
                  --gpg-key keys/archive.asc
              clientctl repo phase notes 100 --repo apt --suite stable \\
                  --gpg-key keys/archive.asc
            """
    )

    @Argument(help: ArgumentHelp("The package.", valueName: "PACKAGE"))
    var package: String
    @Argument(help: ArgumentHelp("The share of machines, 0 to 100.", valueName: "PERCENT"))
    var percent: Int
    @OptionGroup var options: RepoOptions

    func validate() throws {
        guard (0...100).contains(percent) else { throw ValidationError("PERCENT must be 0 to 100, not \(percent)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let entries = try AptRepository.phase(
                package: package, percent: percent, repo: options.repo, suite: options.suite, keyFile: options.gpgKey)
            for e in entries { print("phased \(e.package) \(e.version) (\(e.architecture)) in suite \(options.suite) at \(percent)%") }
        }
    }
}
