import ArgumentParser
import ClientFoundation
import CommandSupport
import ConsoleAccess
import Foundation
import StrictJSON

/// `clientctl operator list --operators FILE [--json]`.
struct OperatorListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the console's operators and their roles.",
        discussion: """
            One line per operator, sorted by name: the name, a tab, the role. Never a \
            password hash. --json prints {"operators": [{"name": …, "role": …}]}.

            Examples:
              clientctl operator list --operators operators.json
              clientctl operator list --operators operators.json --json
            """
    )

    @OptionGroup var file: OperatorsFileOption
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let accounts = try OperatorFile.load(file.operators).accounts
            if output.json {
                let list: [JSONValue] = accounts.map { .object(["name": .string($0.name), "role": .string($0.role.rawValue)]) }
                Console.out(Data(JSONPrettyPrinter.render(.object(["operators": .array(list)]))))
            } else {
                for account in accounts { print("\(account.name)\t\(account.role.rawValue)") }
            }
        }
    }
}
