import ArgumentParser

/// Every subcommand, in the order `--help` lists them. Add one line per command.
enum CommandRegistry {
    static let all: [any ParsableCommand.Type] = [
        InitCommand.self,
        InstallCommand.self,
        StatusCommand.self,
        ListCommand.self,
    ]
}
