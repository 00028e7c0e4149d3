import ArgumentParser
import ClientUpdater
import CommandSupport
import DeviceIdentity
import DeviceSetup
import DeviceTargeting

/// `clientctl label unset KEY…`: removes labels.
struct LabelUnsetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unset",
        abstract: "Remove labels by key (a key that is not set is left as it is).",
        discussion: """
            Examples:
              clientctl label unset --root /var/lib/kiosk ring
            """
    )

    @OptionGroup var device: DeviceOptions
    @Argument(help: ArgumentHelp("Keys to remove.", valueName: "KEY"))
    var keys: [String]

    func validate() throws {
        guard !keys.isEmpty else { throw ValidationError("name at least one KEY") }
        for key in keys {
            if let problem = DeviceLabels.keyProblem(key) { throw ValidationError("label key '\(key)': \(problem)") }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let keys = keys
            let (before, after) = try await DeviceConfig.edit(try device.layout()) { config in
                for key in keys { config.labels.unset(key) }
            }
            let absent = keys.filter { before.labels[$0] == nil }
            if !absent.isEmpty { printError("not set, left as is: \(absent.joined(separator: ", "))") }
            printError(LabelText.changed(before.labels, after.labels))
        }
    }
}
