import ArgumentParser
import DeviceCommands
import ReleaseCommands

/// Every subcommand of the full `clientctl`, in the order `--help` lists them, grouped by the
/// side it runs on. Each side lists its own commands (``ReleaseCommandList``,
/// ``DeviceCommandList``); the overview and the help tests follow from those lists.
enum CommandRegistry {
    /// The two groups as `clientctl --help` lists them.
    static let groups: [CommandGroup] = [
        CommandGroup(name: "Release", subcommands: ReleaseCommandList.commands),
        CommandGroup(name: "Device", subcommands: DeviceCommandList.commands),
    ]
}
