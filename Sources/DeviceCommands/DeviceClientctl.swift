import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation

/// `clientctl` as the device program a package ships (`clientctl-device`) answers it: the
/// device commands only. The release commands, and the collector, publishing and packaging
/// code under them, are in the `clientctl` of a build machine and never on a device.
struct DeviceClientctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clientctl",
        abstract: ClientctlRoot.abstract,
        usage: ClientctlRoot.usage,
        discussion: """
            The device's clientctl: it installs, serves, watches and rolls back. Release \
            commands (keys, publishing, rollouts, packaging, the fleet collector) are in the \
            clientctl of a release engineer's machine.

            \(ClientctlRoot.exitCodes)
            """,
        groupedSubcommands: [CommandGroup(name: "Device", subcommands: DeviceCommandList.commands)]
    )
}

/// The entry point of `clientctl` in the device program (Sources/clientctl-device).
public enum DeviceMain {
    /// The release commands, which this program does not hold. Called with one of them, it
    /// says where that command is (exit 64) instead of argument-parser's "unexpected
    /// argument". (`DeviceLinkageTests` checks the list against the full clientctl's help.)
    static let releaseCommands: Set<String> = [
        "keygen", "publish", "push", "prune", "export", "sign", "root", "verify", "manifest", "rollout", "cohort", "revoke", "collect", "package",
        "repo",
        "fleet", "console", "operator", "audit",
    ]

    /// Parses the process's arguments and runs the device command; exits with its status.
    public static func run() async {
        if let first = CommandLine.arguments.dropFirst().first, releaseCommands.contains(first) {
            printError(
                "clientctl: \(first) is a release command, not part of the device program: run it with the clientctl of a build machine")
            exit(FailureKind.usage.exitCode)
        }
        await ClientctlRoot.main(DeviceClientctl.self)
    }
}
