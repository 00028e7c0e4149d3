import ArgumentParser
import ClientFoundation
import ClientUpdater
import CommandSupport
import DeviceSetup

/// `clientctl download set`: changes the download policy, all of it or none.
struct DownloadSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Change the download windows, rate cap or metered-link rule (all named changes or none).",
        discussion: """
            Only what is named changes. --download-window (repeatable) replaces the windows \
            (--any-time removes them); --metered-interface (repeatable) replaces the \
            interfaces (--no-metered-interfaces removes them). A bad value is refused with \
            one line, exit 64, and config.json is left as it was.

            Examples:
              clientctl download set --root /srv/kiosk \\
                  --download-window 22:00-06:00@Europe/Berlin
              clientctl download set --root /srv/kiosk --download-rate 500KiB/s
              clientctl download set --root /srv/kiosk --metered never
              clientctl download set --root /srv/kiosk --metered patches:5MB \\
                  --metered-interface wwan0 --metered-interface wwan1
              clientctl download set --root /srv/kiosk --any-time --no-rate
            """
    )

    @OptionGroup var device: DeviceOptions
    @Option(
        name: .customLong("download-window"),
        help: ArgumentHelp("A download window, HH:MM-HH:MM[@Area/City]; repeat for several (replaces the windows).", valueName: "WINDOW"))
    var windows: [String] = []
    @Flag(name: .customLong("any-time"), help: "Remove the download windows: download at any time.")
    var anyTime = false
    @Option(name: .customLong("download-rate"), help: ArgumentHelp("The rate cap, as 2MB/s, 500KiB/s or 20Mbit/s.", valueName: "RATE"))
    var rate: String?
    @Flag(name: .customLong("no-rate"), help: "Remove the rate cap.")
    var noRate = false
    @Option(help: ArgumentHelp("What a metered link allows: never, patches:SIZE (as patches:5MB) or always.", valueName: "MODE"))
    var metered: String?
    @Option(
        name: .customLong("metered-interface"),
        help: ArgumentHelp("An interface counted as metered (wwan0); repeat for several (replaces the interfaces).", valueName: "NAME"))
    var interfaces: [String] = []
    @Flag(name: .customLong("no-metered-interfaces"), help: "Remove the metered interfaces.")
    var noInterfaces = false

    /// The settings with the named changes made.
    func changed(_ settings: DeviceSettings) -> DeviceSettings {
        var settings = settings
        if anyTime { settings.downloadWindows = [] }
        if !windows.isEmpty { settings.downloadWindows = windows }
        if noRate { settings.downloadRate = nil }
        if let rate { settings.downloadRate = rate }
        // `always` is the default: kept as no setting, as a device that never set one.
        if let metered { settings.metered = metered == "always" ? nil : metered }
        if noInterfaces { settings.meteredInterfaces = [] }
        if !interfaces.isEmpty { settings.meteredInterfaces = interfaces }
        return settings
    }

    func validate() throws {
        guard anyTime || !windows.isEmpty || noRate || rate != nil || metered != nil || noInterfaces || !interfaces.isEmpty else {
            throw ValidationError(
                "name a change: --download-window, --any-time, --download-rate, --no-rate, --metered, --metered-interface or --no-metered-interfaces")
        }
    }

    /// Why the named changes cannot be made, in the flags' words: a contradiction or a value
    /// that does not read (checked before the root is read); `nil` when they can.
    func refusal() -> String? {
        if anyTime, !windows.isEmpty { return "--any-time and --download-window contradict each other: give one" }
        if noRate, rate != nil { return "--no-rate and --download-rate contradict each other: give one" }
        if noInterfaces, !interfaces.isEmpty { return "--no-metered-interfaces and --metered-interface contradict each other: give one" }
        return changed(DeviceSettings()).downloadProblem().map(RootSettingsOptions.downloadMessage)
    }

    func run() async throws {
        if let refusal = refusal() {
            printError("clientctl: \(refusal)")
            throw ExitCode(FailureKind.usage.exitCode)
        }
        try await runReportingErrors {
            let edit = self
            let (before, after) = try await DeviceConfig.edit(try device.layout()) { config in
                config.deviceSettings = edit.changed(config.deviceSettings)
            }
            printError(DownloadText.changed(before.deviceSettings, after.deviceSettings))
        }
    }
}
