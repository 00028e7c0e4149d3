import ArgumentParser
import CommandSupport
import ConsoleAccess

/// `clientctl operator add NAME --role viewer|operator --operators FILE --password-file F [--replace]`.
struct OperatorAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an operator to the console's operators file.",
        discussion: """
            NAME is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'. The password is \
            the one line of --password-file (its trailing newline is not part of it; `-` \
            reads standard input); an empty file or one of more lines is refused. The file \
            is made when missing. A name already there is refused (exit 73) unless \
            --replace: then its password and role are the new ones. To change a password, \
            add the operator again with --replace. A console running on the file sees the \
            change at the operator's next request.

            Exit status: 64 a bad name or role, 66 no password file, 65 a password file \
            that is not one line or an operators file that is not one, 73 the name exists \
            (or the file cannot be written), 75 another command holds the file's lock.

            Examples:
              clientctl operator add alice --role operator --operators operators.json \\
                  --password-file alice.password
              printf '%s\\n' "$NEW_PASSWORD" | clientctl operator add bob --role viewer \\
                  --operators operators.json --password-file - --replace
            """
    )

    @Argument(help: ArgumentHelp("The operator's login name.", valueName: "NAME"))
    var name: String
    @Option(help: ArgumentHelp("What the operator may do: viewer (sees) or operator (acts).", valueName: "viewer|operator"))
    var role: String
    @OptionGroup var file: OperatorsFileOption
    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("A file holding the password on one line (- for standard input).", valueName: "FILE"))
    var passwordFile: String
    @Flag(help: "Replace an operator of that name (a new password, a new role).")
    var replace = false

    func run() async throws {
        try await runReportingErrors {
            try OperatorAccount.validate(name: name)
            let role = try OperatorRole.named(role)
            let password = try PasswordFile.read(passwordFile)
            let account = try OperatorAccount(name: name, role: role, passwordHash: PasswordHash.make(password))
            let replaced = try OperatorFile.update(file.operators) { operators in
                let existed = operators.account(named: name) != nil
                try operators.add(account, replacing: replace)
                return existed
            }
            print("\(replaced ? "replaced" : "added") operator \(name) (\(role.rawValue)) in \(file.operators)")
        }
    }
}
