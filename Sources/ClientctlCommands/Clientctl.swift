import ArgumentParser
import CommandSupport

/// The `clientctl` command of a build machine: every release and device command.
struct Clientctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clientctl",
        abstract: ClientctlRoot.abstract,
        usage: ClientctlRoot.usage,
        discussion: """
            Release commands run on a release engineer's machine: they make keys, publish \
            signed releases into a release folder and upload it. Device commands run on \
            the device: they install, serve, watch and roll back.

            \(ClientctlRoot.exitCodes)
            """,
        groupedSubcommands: CommandRegistry.groups
    )
}
