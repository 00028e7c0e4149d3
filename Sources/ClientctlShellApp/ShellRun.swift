internal import CWebKitGTK
import ClientEngine
import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import Logging
import ServingCore
import ShellRules
import Synchronization

/// One run of the shell: opens the root, builds the window, runs the ``DeviceHost`` (the
/// device agent, and the loopback listener) on Swift's pool while GTK's main loop owns the
/// main thread, until the window closes (or `--exit-after`, SIGTERM, SIGINT), then shuts
/// the host down in order: the listener stops, then the agent shuts the updater down.
/// The engine's side is in ShellRun+Host.swift, the page's in ShellRun+Page.swift.
final class ShellRun: Sendable {
    let options: ShellCommand
    let log: EventLog
    struct State {
        /// The process's exit status.
        var status: Int32 = 0
        var firstPaintSeen = false
        /// The agent's start-up has ended (a close before it cancels the start-up).
        var startedUp = false
        /// `--snapshot`: one is being taken, another was asked for meanwhile.
        var snapshotBusy = false
        var snapshotAgain = false
        /// A page that has no trial and does not start (docs/native-shell.md#a-page-that-does-not-start):
        /// set in `connect` before the host runs.
        var pageStart: PageStartWatch?
    }
    let state = Mutex(State())
    var pageStart: PageStartWatch? { state.withLock { $0.pageStart } }
    /// What systemd hears (docs/native-shell.md#systemd); nothing outside systemd.
    let systemd = SupervisorStatus()
    /// Opened at the first paint: the launch check waits for the client to be on screen.
    let onScreen = FirstVersionLatch()
    /// Longest the launch check waits for a first paint that does not come.
    static let firstCheckWait: Duration = .seconds(30)

    init(options: ShellCommand) {
        self.options = options
        self.log = EventLog(enabled: options.events)
    }

    /// Runs the shell; returns the process's exit status.
    func run() -> Int32 {
        let engine: DeviceEngine
        let core: ServingCore
        var template: DeviceTemplate?
        let origin: ShellOrigin
        do {
            // The engine's log on stderr unless CLIENTCTL_LOG_LEVEL names a level (docs/concurrency.md#logging).
            let logger = EngineLogging.engineLogger()
            let root = try ShellRoot.prepare(options)
            template = root.template
            origin = try ShellOrigin.chosen(flag: options.origin, template: template, port: options.port)
            engine = try DeviceEngine.open(
                root: root.path, options: .init(startupTimeout: options.startupTimeout.map { .seconds(clamping: $0) }, logger: logger))
            core = try ServingCore(
                wwwDirectory: engine.wwwDirectory, contentSecurityPolicy: options.csp, logger: Logger(label: "clientctl.shell"))
        } catch {
            return Self.fail(error)
        }
        ShellEnvironment.keepUnderRoot(engine.layout.root)
        guard gtk_init_check(nil, nil) != 0 else {
            let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? "unset"
            Self.printError("cannot open a display (DISPLAY=\(display)): run it in a desktop session or under xvfb-run")
            return 69
        }
        // Requests wait for the engine's first version, whichever origin serves them.
        let ready = FirstVersionLatch(clock: engine.monotonic)
        // --origin loopback: the listener binds its port before the engine starts and the
        // view loads (the view's origin names it).
        let loopback = origin == .loopback ? LoopbackOrigin(core: core, app: engine.config.app, port: options.port, ready: ready, log: log) : nil
        let view = ShellView(
            origin: "\(AppScheme.name)://\(engine.config.app)",
            settings: .init(
                title: template?.name ?? engine.config.app, width: options.width, height: options.height, fullscreen: options.fullscreen,
                kiosk: options.kiosk, inspect: options.inspect))
        // The view's storage and cache live in the root, like everything the device writes.
        let data = engine.layout.root + "/shell"
        guard let context = clientctl_web_context_new(data + "/data", data + "/cache") else { return 70 }
        if loopback == nil {
            AppScheme(appID: engine.config.app, core: core, ready: ready) { version in view.documentServed(version: version) }.register(on: context)
        }
        view.freshProcessAfter = options.freshProcessAfter
        view.build(context: context)
        let bridge = ShellBridge(
            core: core, configuration: ServerConfiguration(port: 0, contentSecurityPolicy: options.csp, wwwDirectory: engine.wwwDirectory),
            view: view, ready: ready)
        let interval = options.checkInterval ?? template?.checkIntervalSeconds ?? 3600
        let host = makeHost(engine, bridge: bridge, view: view, checkEvery: .seconds(interval), loopback: loopback)
        connect(view, engine: engine, agent: host.agent, core: core)
        // WebKit's network process ending (docs/native-shell.md#a-page-that-dies): reported;
        // under --origin loopback the page is loaded again with a fresh launch URL.
        view.watchNetworkProcess(reloads: loopback != nil) { [log] fields in log.emit("networkProcessTerminated", fields) }
        let running = Task { await self.runHost(host, bridge: bridge) }
        if let loopback {
            guard case .success = Blocking.wait({ try await loopback.listening() }) else {
                // No port: the host ends with the listener's error (reported as it ends).
                _ = Blocking.wait {
                    await host.shutDown()
                    await running.value
                }
                return state.withLock { $0.status }
            }
            loopback.attach(view)
        }
        // Loading starts now, beside the engine's start-up: its requests wait for the first version.
        view.loadApp()
        if let seconds = options.exitAfter { GMain.after(.seconds(clamping: seconds)) { gtk_main_quit() } }
        // `systemctl stop` sends SIGTERM, Ctrl-C SIGINT: the same orderly end as a closed
        // window (STOPPING=1, refusals reported, the engine shut down, a stopped event).
        for signal in [SIGTERM, SIGINT] { GMain.onSignal(signal) { gtk_main_quit() } }
        // WATCHDOG=1 from GTK's main loop: a hung loop stops it and systemd restarts the shell.
        if let interval = systemd.watchdogInterval { GMain.every(interval) { [systemd] in systemd.watchdog() } }
        gtk_main()
        view.dialogs.dismiss(because: "stopping")
        view.bridgeGuard.refusals.flush()  // refusals not reported yet
        view.dialogs.refusals.flush()
        stop(host, running: running)
        log.emit("stopped")
        return state.withLock { $0.status }
    }

    static func printError(_ message: String) {
        Console.err("clientctl-shell: \(message)\n")
    }

    /// Prints the one-line message and returns the `sysexits(3)` status of `error`.
    static func fail(_ error: any Error) -> Int32 {
        printError("\(error)")
        guard let error = error as? any ClientctlError else { return 70 }
        return error.kind.exitStatus
    }
}
