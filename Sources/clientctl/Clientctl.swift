import ArgumentParser
import ClientUpdater
import ClientUpdaterHTTP
import Foundation

/// The `clientctl` command: ships signed web-client bundles to devices.
@main
struct Clientctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clientctl",
        abstract: "Ship signed web-client bundles to devices and keep every device on a working version.",
        discussion: """
            Release side: keygen, publish, verify, manifest canonical.
            Device side: init, install, status, list, serve, reload, ack, rollback, gc.

            Exit codes (sysexits): 0 ok, 64 usage, 65 bad or rejected data, 66 missing input,
            69 network unavailable, 70 internal error, 73 cannot create, 75 busy (locked root),
            78 configuration.
            """,
        version: ClientctlVersion.string,
        subcommands: CommandRegistry.all
    )
}
