import ArgumentParser
internal import CWebKitGTK
import ClientEngine
import ClientShim
import ClientUpdater
import Foundation

/// `clientctl-shell`: the native Linux shell. One GTK window, one WebKitGTK view, the
/// client of a device root served through `app://<appId>/` and bridged to the engine in
/// this process (docs/native-shell.md).
///
/// A synchronous command on purpose: GTK owns the main thread (`gtk_main`); the engine
/// runs in tasks on Swift's pool and reaches GTK through ``GMain``.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clientctl-shell",
        abstract: "Run a device root's client in a native window (GTK, WebKitGTK), with the update engine in-process.",
        discussion: """
            Opens the root (either channel) like `clientctl serve`: selects the version to
            run, starts its startup trial and checks for updates, but serves the client to
            its own web view through the app://APPID/ scheme, without a port. The page's
            WebAppLocalServer calls reach the engine through WebKit's message handler. The
            shell holds the root's agent lock: it and `clientctl serve` never run on one
            root together (exit 75).

            --origin loopback serves the page from http://127.0.0.1:PORT/ instead,
            for apps that need an http origin (service workers, ws: URLs derived
            from location): only this shell's view is answered (a per-launch
            secret; 403 for anyone else, 421 for another Host), and the bridge is
            still the message handler.

            Examples:
              clientctl-shell --root /var/lib/notes
              clientctl-shell --root /var/lib/notes --kiosk
              clientctl-shell --root /var/lib/lab --origin loopback
              clientctl-shell --template /usr/share/notes   # what /usr/bin/notes runs
              clientctl-shell --root /var/lib/notes --events --snapshot shot.png \\
                  --exit-after 10
            """
    )

    @Option(
        help: ArgumentHelp(
            "Device root folder (default: $CLIENTCTL_ROOT; with --template, $XDG_DATA_HOME/APP or ~/.local/share/APP).",
            valueName: "DIR"))
    var root: String?

    @Option(
        help: ArgumentHelp(
            "A packaged app's template folder (/usr/share/PKG): creates the root at first start, applies its shell version and seed at every start.",
            valueName: "DIR"))
    var template: String?

    @Flag(help: "Fill the screen.")
    var fullscreen = false

    @Flag(help: "Kiosk mode: full screen, no context menu, no navigation away from the app.")
    var kiosk = false

    @Option(help: ArgumentHelp("Window width in pixels.", valueName: "PIXELS"))
    var width = 1024

    @Option(help: ArgumentHelp("Window height in pixels.", valueName: "PIXELS"))
    var height = 768

    @Flag(help: "Enable the web inspector (right click, Inspect Element).")
    var inspect = false

    @Flag(help: "Print one JSON line per engine event on stdout.")
    var events = false

    @Option(help: ArgumentHelp("Write a PNG of the view after every acknowledged startup and every ended trial.", valueName: "FILE.png"))
    var snapshot: String?

    @Option(name: .customLong("exit-after"), help: ArgumentHelp("Close the shell after this many seconds.", valueName: "SECONDS"))
    var exitAfter: Double?

    @Option(
        name: .customLong("check-interval"),
        help: ArgumentHelp(
            "Seconds between update checks, the first once the client is on screen; 0 checks only when the page asks (default: the template's, else 3600).",
            valueName: "SECONDS"))
    var checkInterval: Int?

    @Option(
        name: .customLong("startup-timeout"),
        help: ArgumentHelp("Seconds a new version has to report startup complete (default: the root's config).", valueName: "SECONDS"))
    var startupTimeout: Double?

    @Option(help: ArgumentHelp("Content-Security-Policy sent with every file.", valueName: "POLICY"))
    var csp: String?

    @Option(
        help: ArgumentHelp(
            "Where the page lives: app (app://APPID/, no port) or loopback (http://127.0.0.1:PORT/, for service workers and ws: URLs); default: the template's, else app.",
            valueName: "app|loopback"))
    var origin: ShellOrigin?

    @Option(
        help: ArgumentHelp(
            "With --origin loopback: the port on 127.0.0.1 (default: serve's port for the app id; 0 = any free port).", valueName: "PORT"))
    var port: Int?

    @Option(
        name: .customLong("fresh-process-after"),
        help: ArgumentHelp(
            "Load the app in a new web process after this many loads of its page (switches, rollbacks, reloads); 0: never.",
            valueName: "LOADS"))
    var freshProcessAfter = 50

    func validate() throws {
        guard (100...16384).contains(width), (100...16384).contains(height) else {
            throw ValidationError("--width and --height must be between 100 and 16384 pixels")
        }
        if let exitAfter, !(exitAfter > 0 && exitAfter <= 86400 * 365) { throw ValidationError("--exit-after must be a positive number of seconds") }
        if let checkInterval, !(checkInterval == 0 || (1...604_800).contains(checkInterval)) {
            throw ValidationError("--check-interval must be 0 (off) or 1 to 604800 seconds")
        }
        if let startupTimeout, !(1...3600).contains(startupTimeout) {
            throw ValidationError("--startup-timeout must be between 1 and 3600 seconds")
        }
        guard (0...1_000_000).contains(freshProcessAfter) else { throw ValidationError("--fresh-process-after must be between 0 and 1000000") }
        if let csp, csp.contains("\n") || csp.contains("\r") { throw ValidationError("--csp must be one line") }
        if let port {
            // With --template and no --origin, the template's origin decides (ShellRun).
            guard origin == .loopback || (origin == nil && template != nil) else { throw ValidationError("--port needs --origin loopback") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        }
    }

    func run() throws {
        let status = ShellRun(options: self).run()
        // `_exit`, not a return into the C library's `exit`: by now the engine has shut down and every
        // record is on disk, but WebKit's, GLib's and the server's threads still run, and
        // `exit` would tear down static state under them. A shell in CI crashed that way
        // after its `stopped` line (Swift's backtracer then held the stop for over a minute).
        fflush(nil)  // every stdio stream: the event lines
        _exit(status)
    }

}
