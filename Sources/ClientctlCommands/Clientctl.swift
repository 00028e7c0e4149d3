import ArgumentParser
import ClientUpdater
import Foundation

/// The `clientctl` command: ships signed web-client bundles to devices.
struct Clientctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clientctl",
        abstract: "Ship signed web-client bundles to devices and keep every device on a working version.",
        usage: """
            clientctl <subcommand>
            clientctl --version
            """,
        discussion: """
            Release commands run on a release engineer's machine: they make keys, publish \
            signed releases into a release folder and upload it. Device commands run on \
            the device: they install, serve, watch and roll back.

            Exit codes (sysexits): 0 ok, 64 usage, 65 bad or rejected data, 66 missing \
            input, 69 network unavailable, 70 internal error, 73 cannot create, 75 busy \
            (locked root), 78 configuration.
            """,
        // No `version:` here: argument-parser would then treat `--version` as a request for
        // the tool's version in every subcommand, even where it is `publish --version SEMVER`
        // whose parsing failed (a missing option printed the version and exited 0). `main()`
        // answers `clientctl --version` alone.
        groupedSubcommands: CommandRegistry.groups
    )

    /// `clientctl --version` prints the tool's version; every other command line is parsed
    /// by argument-parser.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--version"] {
            print(ClientctlVersion.string)
            return
        }
        await main(arguments)
    }
}
