import ArgumentParser
import ClientFoundation

/// What the two programs that answer to `clientctl` share at their root: the full tool of a
/// build machine (every command) and the device program a package ships (device commands
/// only). Each declares its own root command with these texts and its own subcommands.
package enum ClientctlRoot {
    /// The one-line abstract of `clientctl --help`.
    package static let abstract = "Ship signed web-client bundles to devices and keep every device on a working version."

    /// The usage lines of `clientctl --help`.
    package static let usage = """
        clientctl <subcommand>
        clientctl --version
        """

    /// The exit codes every command shares (sysexits), for the help's discussion.
    package static let exitCodes = """
        Exit codes (sysexits): 0 ok, 64 usage, 65 bad or rejected data, 66 missing \
        input, 69 network unavailable, 70 internal error, 73 cannot create, 75 busy \
        (locked root), 77 not permitted by the device's trust, 78 configuration.
        """

    /// Runs `root` on the process's arguments: `--version` alone prints the tool's version;
    /// every other command line is parsed by argument-parser.
    ///
    /// The root commands declare no `version:`: argument-parser would then treat `--version`
    /// as a request for the tool's version in every subcommand, even where it is `publish
    /// --version SEMVER` whose parsing failed (a missing option printed the version and
    /// exited 0).
    package static func main(_ root: any AsyncParsableCommand.Type) async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--version"] {
            print(ClientctlVersion.string)
            return
        }
        await root.main(arguments)
    }
}
