import ArgumentParser
import ClientUpdater
import CommandSupport
import DeviceSetup

/// `clientctl label list`: the root's labels, one `KEY=VALUE` per line.
struct LabelListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print this device's labels, one KEY=VALUE per line (--json: an object).",
        discussion: """
            Examples:
              clientctl label list --root /var/lib/kiosk
              clientctl label list --root /var/lib/kiosk --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let labels = try DeviceConfig.load(try device.layout()).labels
            if output.json {
                try printJSON(labels)
            } else {
                for (key, value) in labels.sorted { print("\(key)=\(value)") }
            }
        }
    }
}
