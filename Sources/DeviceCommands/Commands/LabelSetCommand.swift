import ArgumentParser
import ClientUpdater
import CommandSupport
import DeviceSetup
import DeviceTargeting

/// `clientctl label set KEY=VALUE…`: adds or changes labels, all or none.
struct LabelSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Add or change labels (KEY=VALUE; all of them or none).",
        discussion: """
            A key is a lowercase letter, then up to 62 lowercase letters, digits, '.', '_' \
            or '-'; a value is 1 to 64 letters, digits or '. _ - : / + @'; at most 32 \
            labels. A bad one is refused with exit 64 and nothing is written.

            Examples:
              clientctl label set --root /var/lib/kiosk store=12
              clientctl label set --root /var/lib/kiosk ring=beta site=lobby
            """
    )

    @OptionGroup var device: DeviceOptions
    @Argument(help: ArgumentHelp("Labels to set.", valueName: "KEY=VALUE"))
    var assignments: [String]

    func validate() throws {
        guard !assignments.isEmpty else { throw ValidationError("name at least one KEY=VALUE") }
    }

    func run() async throws {
        try await runReportingErrors {
            let wanted = try RootSettingsOptions.labels(assignments)
            let (before, after) = try await DeviceConfig.edit(try device.layout()) { config in
                for (key, value) in wanted.sorted { try config.labels.set(key, value) }
            }
            printError(LabelText.changed(before.labels, after.labels))
        }
    }
}
