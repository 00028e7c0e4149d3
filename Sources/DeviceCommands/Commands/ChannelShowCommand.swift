import ArgumentParser
import ClientUpdater
import CommandSupport
import SignedArchive

/// `clientctl channel show`: the channel the device follows and those it may choose.
struct ChannelShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the channel this device follows and the channels its trust root lets it choose (--json: an object).",
        discussion: """
            Examples:
              clientctl channel show --root /var/lib/kiosk
              clientctl channel show --root /var/lib/kiosk --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let choice = try ChannelMove.read(try device.layout())
            if output.json {
                try printJSON(choice)
            } else {
                print(ChannelText.show(choice))
            }
        }
    }
}
