import ArgumentParser
import CommandSupport
import ConsoleAccess

/// `clientctl operator remove NAME --operators FILE`.
struct OperatorRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove an operator from the console's operators file.",
        discussion: """
            The operator can no longer log in; a console running on the file ends the \
            operator's sessions at their next request. A name the file does not hold is \
            refused (exit 66) and nothing changes.

            Examples:
              clientctl operator remove bob --operators operators.json
            """
    )

    @Argument(help: ArgumentHelp("The operator's login name.", valueName: "NAME"))
    var name: String
    @OptionGroup var file: OperatorsFileOption

    func run() async throws {
        try await runReportingErrors {
            try OperatorAccount.validate(name: name)
            _ = try OperatorFile.load(file.operators)  // a missing file is refused before its lock is made
            let removed = try OperatorFile.update(file.operators) { try $0.remove(named: name) }
            print("removed operator \(removed.name) (\(removed.role.rawValue)) from \(file.operators)")
        }
    }
}
