import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// `clientctl repo remove PKG --repo DIR --suite NAME --gpg-key FILE`.
struct RepoRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a package from a suite of an apt repository and sign it.",
        discussion: """
            Removes PKG (every architecture) from --suite, then signs every suite again. A \
            suite that does not hold it is refused (exit 66) and nothing changes. Devices \
            keep the version they have: apt removes nothing because a repository dropped it.

            Examples:
              clientctl repo remove notes --repo apt --suite beta --gpg-key keys/archive.asc
            """
    )

    @Argument(help: ArgumentHelp("The Debian package name.", valueName: "PKG"))
    var package: String
    @OptionGroup var options: RepoOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let removed = try AptRepository.remove(package: package, repo: options.repo, suite: options.suite, keyFile: options.gpgKey)
            if output.json {
                let list: [JSONValue] = removed.map { e in
                    .object(["package": .string(e.package), "version": .string(e.version), "architecture": .string(e.architecture)])
                }
                Console.out(Data(JSONPrettyPrinter.render(.object(["suite": .string(options.suite), "removed": .array(list)]))))
            } else {
                for e in removed { print("removed \(e.package) \(e.version) (\(e.architecture)) from suite \(options.suite)") }
            }
        }
    }
}
