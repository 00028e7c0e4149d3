import ArgumentParser
import ClientFoundation
import CommandSupport

/// `clientctl revoke CHANNEL VERSION…`.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Make devices leave versions of a channel and never select them again.",
        discussion: """
            Re-signs OUT/CHANNEL/manifest.json with the versions added to its `revoked` \
            list. At their next check, devices blacklist them; a device running one \
            switches to its newest good version (or the embedded seed). To revoke the \
            release the channel offers now, publish a newer one with --revoke instead. A \
            version a pin holds devices on is refused (exit 65): they would take no release \
            at all; `rollout unpin` them first.

            Examples:
              clientctl revoke stable 1.4.0 --out releases --key k.pem
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    @Argument(help: ArgumentHelp("Versions to revoke.", valueName: "VERSION"))
    var versions: [Version]

    func run() async throws {
        try await runReportingErrors { try await edit.apply(.revoke(versions)) }
    }
}
