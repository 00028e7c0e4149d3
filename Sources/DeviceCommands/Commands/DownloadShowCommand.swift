import ArgumentParser
import ClientUpdater
import CommandSupport
import DeviceSetup

/// `clientctl download show`: the root's download policy.
struct DownloadShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print this device's download windows, rate cap and metered-link rule (--json: an object).",
        discussion: """
            Examples:
              clientctl download show --root /srv/kiosk
              clientctl download show --root /srv/kiosk --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    /// The policy as `--json` prints it: the settings as typed, `metered` always named.
    struct Shown: Encodable {
        var downloadWindows: [String]
        var downloadRate: String?
        var metered: String
        var meteredInterfaces: [String]
    }

    func run() async throws {
        try await runReportingErrors {
            let settings = try DeviceConfig.load(try device.layout()).deviceSettings
            if output.json {
                try printJSON(
                    Shown(
                        downloadWindows: settings.downloadWindows, downloadRate: settings.downloadRate, metered: settings.metered ?? "always",
                        meteredInterfaces: settings.meteredInterfaces))
            } else {
                for line in DownloadText.lines(settings) { print(line) }
            }
        }
    }
}

/// The download policy in lines, as `download show` prints it and `download set` says what
/// it changed.
enum DownloadText {
    /// Each setting's name and value as shown.
    static func fields(_ settings: DeviceSettings) -> [(name: String, value: String)] {
        let zone = settings.applyTimeZone.map { " (zone: \($0) where a window names none)" } ?? ""
        return [
            ("windows", settings.downloadWindows.isEmpty ? "any time" : settings.downloadWindows.joined(separator: ", ") + zone),
            ("rate", settings.downloadRate ?? "no cap"),
            ("metered", settings.metered ?? "always"),
            ("metered interfaces", settings.meteredInterfaces.isEmpty ? "none named" : settings.meteredInterfaces.joined(separator: ", ")),
        ]
    }

    /// `name: value`, one a line.
    static func lines(_ settings: DeviceSettings) -> [String] {
        fields(settings).map { "\($0.name): \($0.value)" }
    }

    /// What changed, `name: new (was old)`, one a line; `download policy unchanged` when nothing did.
    static func changed(_ before: DeviceSettings, _ after: DeviceSettings) -> String {
        let lines = zip(fields(before), fields(after)).filter { $0.value != $1.value }.map { was, now in
            "\(now.name): \(now.value) (was \(was.value))"
        }
        return lines.isEmpty ? "download policy unchanged" : lines.joined(separator: "\n")
    }
}
