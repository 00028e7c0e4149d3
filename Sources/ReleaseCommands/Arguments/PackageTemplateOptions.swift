import ArgumentParser
import CommandSupport
import DeviceSetup

/// `package`'s settings of the device template it ships (`/usr/share/PKG/`): the root's
/// settings, how often devices check and where the app's page lives.
struct PackageTemplateOptions: ParsableArguments {
    @OptionGroup var settings: RootSettingsOptions
    @Option(
        name: .customLong("check-interval"),
        help: ArgumentHelp("Seconds between update checks; 0 checks only when the page asks.", valueName: "SECONDS"))
    var checkInterval: Int = 3600
    @Option(
        help: ArgumentHelp(
            "Where the app's page lives: app (app://ID/) or loopback (http://127.0.0.1:PORT/, for service workers and ws: URLs).",
            valueName: "app|loopback"))
    var origin = "app"

    /// Refuses an interval, origin or setting a device would refuse; called by `package`'s
    /// `validate()` in its order.
    /// - Throws: `ValidationError` naming the flag.
    func check() throws {
        guard checkInterval == 0 || (1...604_800).contains(checkInterval) else {
            throw ValidationError("--check-interval must be 0 (off) or 1 to 604800 seconds")
        }
        guard DeviceTemplate.origins.contains(origin) else {
            throw ValidationError("--origin must be one of \(DeviceTemplate.origins.joined(separator: ", "))")
        }
        if let problem = settings.deviceSettings.fieldProblem(allowInsecureHTTP: false) {
            throw ValidationError("\(FlagNames.flag(problem.field)) \(problem.problem)")
        }
    }
}
