import AppPackaging
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// `clientctl repo list --repo DIR [--suite NAME] [--json]`.
struct RepoListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the packages of an apt repository's suites.",
        discussion: """
            One line per package: suite, package, version, architecture, and "phased N%" \
            when repo phase set one. Needs no key and changes nothing.

            Examples:
              clientctl repo list --repo apt
              clientctl repo list --repo apt --suite stable --json
            """
    )

    @Option(help: ArgumentHelp("The repository folder.", valueName: "DIR"))
    var repo: String
    @Option(help: ArgumentHelp("Only this suite.", valueName: "NAME"))
    var suite: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let entries = try AptRepository.list(repo: repo, suite: suite)
            if output.json {
                let list: [JSONValue] = entries.map { e in
                    .object([
                        "suite": .string(e.suite), "package": .string(e.package), "version": .string(e.version),
                        "architecture": .string(e.architecture), "file": .string(e.file),
                        "phasedUpdatePercentage": e.phase.map { .integer(Int64($0)) } ?? .null,
                    ])
                }
                Console.out(Data(JSONPrettyPrinter.render(.object(["packages": .array(list)]))))
            } else {
                for e in entries {
                    print("\(e.suite)\t\(e.package)\t\(e.version)\t\(e.architecture)" + (e.phase.map { "\tphased \($0)%" } ?? ""))
                }
            }
        }
    }
}
