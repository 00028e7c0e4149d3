import ArgumentParser
import CommandSupport
import DeviceSetup
import ServingCore

/// `clientctl serve`: the device agent.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the current client on loopback HTTP, run the startup watchdog and check for updates.",
        discussion: """
            Starts the root (selection, crash-in-trial recovery, shell-update reset), \
            serves the current version on 127.0.0.1 and answers the WebAppLocalServer shim \
            under /__clientctl/ (startup-complete, check, switch-to-pending, status, \
            events). A version that does not report startup complete within the startup \
            timeout is rolled back: once to the retry list, the second time blacklisted.

            Checks for updates every --check-interval seconds (0 = only when a page asks).

            Only requests whose Host names this listener (127.0.0.1:PORT, localhost:PORT, \
            [::1]:PORT) are answered (421 otherwise), and POSTs from another origin are \
            refused (403). While serve runs it is the only writer of the root's watchdog: \
            `clientctl reload`, `ack`, `rollback` and `gc` are refused (exit 75).

            Prints `serving http://127.0.0.1:PORT/` on stderr once listening; SIGTERM or \
            SIGINT shut it down cleanly. The port defaults to one derived from the app id \
            (12000–13000), so the page's origin and storage survive restarts.

            Under systemd (Type=notify, NOTIFY_SOCKET set) it reports READY=1 and a \
            STATUS= line naming the served version once listening, WATCHDOG=1 from its \
            event loops under WatchdogSec=, and STOPPING=1 at shutdown (docs/serving.md).

            Examples:
              clientctl serve --root /var/lib/notes
              clientctl serve --root /var/lib/notes --port 12345 \\
                  --check-interval 600
              clientctl serve --root /var/lib/notes --csp "default-src 'self'" \\
                  --startup-timeout 20
              clientctl serve --template /usr/share/notes --root /var/lib/notes
            """
    )

    @OptionGroup var device: DeviceOptions

    @Option(
        help: ArgumentHelp(
            "A packaged app's template folder (/usr/share/PKG): creates the root at first start, applies its shell version and seed at every start.",
            valueName: "DIR"))
    var template: String?

    @Option(help: ArgumentHelp("TCP port on 127.0.0.1 (default: derived from the app id; 0 = any free port).", valueName: "PORT"))
    var port: Int?

    @Option(
        name: .customLong("check-interval"),
        help: ArgumentHelp(
            "Seconds between update checks (1–604800); 0 disables periodic checks (default: the template's, else 3600).", valueName: "SECONDS"))
    var checkInterval: Seconds?

    @Option(help: ArgumentHelp("Content-Security-Policy header sent with every file.", valueName: "POLICY"))
    var csp: String?

    @Option(
        name: .customLong("startup-timeout"),
        help: ArgumentHelp("Seconds a new version has to report startup complete (default: config, 10).", valueName: "SECONDS"))
    var startupTimeout: Seconds?

    @Option(
        name: .customLong("header-timeout"), help: ArgumentHelp("Seconds a connection has to send a request head.", valueName: "SECONDS")
    )
    var headerTimeout = Seconds(10)

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Seconds a keep-alive connection may wait for its next request.", valueName: "SECONDS"))
    var idleTimeout = Seconds(30)

    func validate() throws {
        for (flag, seconds) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout)]
        where !ServerConfiguration.timeoutRange.contains(seconds.duration) {
            throw ValidationError("\(flag) must be between 0.1 and 3600 seconds")
        }
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        if let checkInterval, checkInterval.value != 0 {
            try checkInterval.require(
                in: DeviceConfig.checkIntervalRange, flag: "--check-interval",
                rule: "0 (off), or 1 to 604800 seconds")
        }
        try startupTimeout?.requireStartupTimeout()
    }

    func run() async throws {
        try await runReportingErrors {
            var device = self.device
            var interval = checkInterval?.value ?? 3600
            if let template {
                let prepared = try await TemplateSetup.prepare(template, root: device.root)
                device.root = prepared.root
                interval = checkInterval?.value ?? prepared.checkInterval ?? interval
            }
            let context = try DeviceContext.open(device, startupTimeout: startupTimeout?.duration)
            let configuration = ServerConfiguration(
                port: port ?? ServerConfiguration.derivedPort(forApp: context.config.app), contentSecurityPolicy: csp,
                wwwDirectory: context.engine.wwwDirectory, headerTimeout: headerTimeout.duration, idleTimeout: idleTimeout.duration)
            try await ServeHost.make(context, configuration: configuration, checkEvery: .seconds(interval)).run()
            printError("clientctl serve: stopped")
        }
    }
}
