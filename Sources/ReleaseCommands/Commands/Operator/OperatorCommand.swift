import ArgumentParser

/// `clientctl operator …`: who may log in to `clientctl console`, and with which role.
struct OperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Keep the console's operators file: names, roles and password hashes.",
        discussion: """
            The operators file (JSON, mode 0600) lists who may log in to `clientctl \
            console`. A viewer sees every page; an operator also acts (halt, lift, cap, \
            admit, reject). Passwords are read from a file of one line, never from the \
            command line, and stored as scrypt hashes; no command prints or logs them. \
            Guide: docs/guides/console.md#operators.

            Examples:
              clientctl operator add alice --role operator --operators operators.json \\
                  --password-file alice.password
              clientctl operator add alice --role operator --operators operators.json \\
                  --password-file new.password --replace
              clientctl operator list --operators operators.json
              clientctl operator remove bob --operators operators.json
            """,
        subcommands: [OperatorAddCommand.self, OperatorRemoveCommand.self, OperatorListCommand.self]
    )
}

/// `--operators FILE`, which every `operator` subcommand takes.
struct OperatorsFileOption: ParsableArguments {
    @Option(help: ArgumentHelp("The operators file (made by the first operator add).", valueName: "FILE"))
    var operators: String
}
