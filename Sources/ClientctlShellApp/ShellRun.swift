internal import CWebKitGTK
import ClientEngine
import ClientFoundation
import ClientShim
import ClientUpdater
import DeviceSetup
import Foundation
import Logging
import ServiceLifecycle
import ServingCore
import ShellRules
import Synchronization

/// One run of the shell: opens the root, builds the window, runs the device agent (and the
/// loopback listener) in a `ServiceGroup` on Swift's pool while GTK's main loop owns the
/// main thread, until the window closes (or `--exit-after`, SIGTERM, SIGINT), then shuts
/// the group down in order: the listener stops, then the agent shuts the updater down.
final class ShellRun: Sendable {
    let options: ShellCommand
    let log: EventLog
    private struct State {
        /// The process's exit status.
        var status: Int32 = 0
        var firstPaintSeen = false
        /// The agent's start-up has ended (a close before it cancels the start-up).
        var startedUp = false
        /// `--snapshot`: one is being taken, another was asked for meanwhile.
        var snapshotBusy = false
        var snapshotAgain = false
        /// A page that has no trial and does not start (docs/native-shell.md#a-page-that-does-not-start):
        /// set in `connect` before the engine's task starts.
        var pageStart: PageStartWatch?
    }
    private let state = Mutex(State())
    private var pageStart: PageStartWatch? { state.withLock { $0.pageStart } }
    /// What systemd hears (docs/native-shell.md#systemd); nothing outside systemd.
    private let systemd = SupervisorStatus()
    /// Opened at the first paint: the launch check waits for the client to be on screen.
    private let onScreen = FirstVersionLatch()
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
            engine = try DeviceEngine.open(root: root.path, options: .init(startupTimeoutSeconds: options.startupTimeout, logger: logger))
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
        let ready = FirstVersionLatch()
        let loopback: LoopbackOrigin?
        do {
            // --origin loopback: the port is bound before the view, whose origin names it.
            loopback =
                origin == .loopback ? try LoopbackOrigin.start(core: core, app: engine.config.app, port: options.port, ready: ready) : nil
        } catch {
            return Self.fail(error)
        }
        let view = ShellView(
            origin: loopback?.origin ?? "\(AppScheme.name)://\(engine.config.app)",
            settings: .init(
                title: template?.name ?? engine.config.app, width: options.width, height: options.height, fullscreen: options.fullscreen,
                kiosk: options.kiosk, inspect: options.inspect))
        // The view's storage and cache live in the root, like everything the device writes.
        let data = engine.layout.root + "/shell"
        guard let context = clientctl_web_context_new(data + "/data", data + "/cache") else { return 70 }
        if let loopback {
            loopback.attach(view)
            log.emit("listening", ["uri": loopback.origin + "/"])
        } else {
            AppScheme(appID: engine.config.app, core: core, ready: ready) { version in view.documentServed(version: version) }.register(on: context)
        }
        view.freshProcessAfter = options.freshProcessAfter
        view.build(context: context)
        let configuration = ServerConfiguration(port: 0, contentSecurityPolicy: options.csp, wwwDirectory: engine.wwwDirectory)
        let bridge = ShellBridge(core: core, configuration: configuration, view: view, ready: ready)
        let interval = options.checkInterval ?? template?.checkIntervalSeconds ?? 3600
        // The first check once the current version is on screen (its first paint, or at
        // most `firstCheckWait` later if it never paints), then one every interval;
        // failures arrive as `error` events (the sink forwards them to stdout and the page).
        let agent = DeviceAgent(
            engine, supervisor: systemd, sinks: [{ [self] event in self.forward(event, to: view) }], bridge: bridge,
            checkEvery: Double(interval), firstCheck: { [onScreen] in await onScreen.wait(atMost: Self.firstCheckWait) },
            started: { [self] report in self.started(report) })
        connect(view, engine: engine, agent: agent, core: core)
        // WebKit's network process ending (docs/native-shell.md#a-page-that-dies): reported;
        // under --origin loopback the page is loaded again with a fresh launch URL.
        view.watchNetworkProcess(reloads: loopback != nil) { [log] fields in log.emit("networkProcessTerminated", fields) }
        // A group stops its services in reverse order: the listener first, then the agent.
        // GTK's loop handles the signals, so the group traps none.
        var services = [ServiceGroupConfiguration.ServiceConfiguration(service: agent)]
        if let loopback { services.append(.init(service: loopback)) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, logger: Logger(label: "clientctl.shell", factory: { _ in SwiftLogNoOpLogHandler() })))
        let engineTask = Task { await self.runGroup(group, bridge: bridge) }
        // Loading starts now, beside the engine's start-up: its requests wait for the first version.
        view.loadApp()
        if let seconds = options.exitAfter { GMain.after(seconds: seconds) { gtk_main_quit() } }
        // `systemctl stop` sends SIGTERM, Ctrl-C SIGINT: the same orderly end as a closed
        // window (STOPPING=1, refusals reported, the engine shut down, a stopped event).
        for signal in [SIGTERM, SIGINT] { GMain.onSignal(signal) { gtk_main_quit() } }
        // WATCHDOG=1 from GTK's main loop: a hung loop stops it and systemd restarts the shell.
        if let interval = systemd.watchdogInterval { GMain.every(seconds: interval / .seconds(1)) { [systemd] in systemd.watchdog() } }
        gtk_main()
        view.dialogs.dismiss(because: "stopping")
        view.bridgeGuard.refusals.flush()  // refusals not reported yet
        view.dialogs.refusals.flush()
        agent.stopping()  // STOPPING=1 at once; the group's shutdown follows
        let startedUp = state.withLock { $0.startedUp }
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await group.triggerGracefulShutdown()
            // A start-up still waiting (for the root's lock, say) ends now, cancelled.
            if !startedUp { engineTask.cancel() }
            await engineTask.value
            stopped.signal()
            g_main_context_wakeup(nil)
        }
        // The main context keeps running until the engine has shut down: an operation in
        // flight (a switch or a rollback reloading the view through `GMain.run`) needs this
        // thread to finish, and the shutdown waits for that operation. Blocked here, the
        // shell hung on SIGTERM when a switch was under way.
        while stopped.wait(timeout: .now()) == .timedOut { g_main_context_iteration(nil, 1) }
        log.emit("stopped")
        return state.withLock { $0.status }
    }

    /// The page's messages go to the engine; the window's close ends the run.
    private func connect(_ view: ShellView, engine: DeviceEngine, agent: DeviceAgent, core: ServingCore) {
        let apply = agent.apply
        // The page's check runs through the agent, so the apply driver sees its download.
        let bridge = PageBridge(
            control: UpdaterControl(engine.updater, check: { _ = try await agent.checkForUpdates() }),
            onFirstPaint: { [self] in
                let first = state.withLock { state in
                    defer { state.firstPaintSeen = true }
                    return !state.firstPaintSeen
                }
                if first {
                    log.emit("firstPaint", ["ms": log.millisecondsSinceLaunch])
                    systemd.ready { version, state in "showing \(version) (\(state))" }
                    onScreen.open()
                }
            },
            onAcknowledged: { [self] version in
                pageStart?.acknowledged(version)
                GMain.after(seconds: 0.2) { self.takeSnapshot(view) }
            },
            hold: { seconds in apply.hold(lease: "page", seconds: seconds) },
            channels: { [layout = engine.layout] name in
                if let name { return try await PageChannels.set(name, layout: layout) }
                return try await PageChannels.read(layout)
            })
        // The switch to a staged version (docs/apply-policies.md#the-native-shell): idle time
        // from the view's own input; a page's lease ends with its page and its web process;
        // a top-level navigation of the app waits while a staged version takes over.
        view.watchInput()
        view.onInput = { apply.noteInput() }
        view.onPageReplaced = { apply.releaseLeases() }
        view.onNavigation = { [log] uri in
            // Only a navigation to the start page, where the bridge's page acknowledges the
            // trial: a page of its own (another HTML file) loads from the running version.
            guard apply.waitsForNavigation, core.answersWithStartPage(URLComponents(string: uri)?.percentEncodedPath ?? "") else { return false }
            Task {
                if let version = await apply.navigated() { log.emit("switchedOnNavigation", ["version": version]) }
                GMain.async { view.loadAgain(uri) }
            }
            return true
        }
        // The page's messages are answered in the order it sent them (a switch, then an
        // acknowledgement from the same old page, is refused deterministically); a check
        // runs beside the queue, so a long download never delays an acknowledgement.
        let (messages, queue) = AsyncStream.makeStream(of: QueuedMessage.self)
        view.onMessage = { message, reply in queue.yield(QueuedMessage(message: message, reply: MainThreadObject(pointer: reply))) }
        // A page that keeps making refused calls gets a few `error` lines, then one a
        // second; every refusal is counted in `bridgeRefused` (`callRefused`).
        let errorLines = LineThrottle()
        Task { [log] in
            for await item in messages {
                let answer = { @Sendable (result: Result<String, BridgeRefusal>) in
                    if case .failure(let refusal) = result {
                        if errorLines.admit() { log.emit("error", ["action": item.message.action ?? "", "message": refusal.message]) }
                        GMain.async { view.bridgeGuard.count(.callRefused) }
                    }
                    GMain.async { item.reply.pointer(result) }
                }
                if item.message.action == "check" {
                    Task { answer(await bridge.answer(item.message)) }
                } else {
                    answer(await bridge.answer(item.message))
                }
            }
        }
        view.onRefusedNavigation = { [log] uri, reason in log.emit("navigationRefused", ["uri": uri, "reason": reason]) }
        view.loadFailures.onFailed = { [log] fields in log.emit("loadFailed", fields) }
        // A page that dies, hangs or floods the bridge (docs/native-shell.md#a-page-that-dies).
        let recovery = PageRecovery(updater: engine.updater, view: view, log: log)
        let watch = PageStartWatch(updater: engine.updater, view: view, log: log, timeout: engine.config.startupTimeoutSeconds)
        state.withLock { $0.pageStart = watch }
        view.onWebProcessTerminated = { reason, version, byShell in
            apply.releaseLeases()  // a lease dies with its web process
            recovery.terminated(reason: reason, version: version, byShell: byShell)
        }
        view.bridgeGuard.refusals.onReport = { [log] counts in log.emit("bridgeRefused", CoalescedCounts.fields(counts)) }
        view.dialogs.refusals.onReport = { [log] counts in log.emit("dialogRefused", CoalescedCounts.fields(counts)) }
        view.dialogs.onOpened = { [log] kind in log.emit("dialogOpened", ["kind": kind.rawValue]) }
        view.dialogs.onClosed = { [log] kind, reason in log.emit("dialogClosed", ["kind": kind.rawValue, "reason": reason]) }
        view.onClose = { gtk_main_quit() }
    }

    /// An engine event to stdout and the page (the agent's sink; systemd has followed it).
    private func forward(_ event: UpdaterEvent, to view: ShellView) {
        log.emit(event)
        pageStart?.engineEvent(event)
        switch event {
        case .updateAvailable(let version):
            GMain.async { view.deliver(event: "updateAvailable", json: "{\"version\":\(PageBridge.jsString(version))}") }
        case .error(let message):
            GMain.async { view.deliver(event: "error", json: "{\"message\":\(PageBridge.jsString(message))}") }
        case .watchdog(.failed), .watchdog(.revoked):
            // The good version reloads; if its page never acknowledges, snapshot anyway.
            GMain.after(seconds: 2) { self.takeSnapshot(view) }
        default: break
        }
    }

    /// The agent's start-up has ended: the run's `started` event, the page-start watch told.
    private func started(_ report: LifecycleReport) {
        state.withLock { $0.startedUp = true }
        log.emit("started", ["version": report.current.description, "ms": log.millisecondsSinceLaunch])
        pageStart?.started(report)
        if report.shellUpdateReset { Self.printError("new embedded seed: downloaded versions dropped") }
    }

    /// Runs the group (a task on Swift's pool) until it has shut down; a start-up that
    /// fails ends the shell with its exit status.
    private func runGroup(_ group: ServiceGroup, bridge: ShellBridge) async {
        do {
            try await group.run()
        } catch is CancellationError {
            // The window closed (or --exit-after ran out) while the engine was starting,
            // e.g. waiting for a one-shot command's agent lock: a normal exit.
        } catch {
            let code = Self.fail(error)
            log.emit("error", ["message": "\(error)"])
            state.withLock { $0.status = code }
            GMain.async { gtk_main_quit() }
        }
        bridge.ready.open()  // requests still waiting get 503: the shell is closing
    }

    /// `--snapshot`: a PNG of the view after every acknowledged start-up and every ended
    /// trial, replacing the file atomically (main thread; a request during a snapshot
    /// takes another one after it).
    private func takeSnapshot(_ view: ShellView) {
        guard let path = options.snapshot else { return }
        let busy = state.withLock { state in
            defer { state.snapshotBusy = true }
            if state.snapshotBusy { state.snapshotAgain = true }
            return state.snapshotBusy
        }
        guard !busy else { return }
        let temporary = path + ".tmp-\(getpid())"
        view.snapshot(to: temporary) { [self] failure in
            if let failure {
                Self.printError(failure)
                log.emit("error", ["message": failure])
            } else if rename(temporary, path) != 0 {
                let message = "cannot write \(path): \(String(cString: strerror(errno)))"
                Self.printError(message)
                log.emit("error", ["message": message])
            } else {
                log.emit("snapshot", ["path": path, "version": view.pageVersion ?? ""])
            }
            let again = state.withLock { state in
                defer { (state.snapshotBusy, state.snapshotAgain) = (false, false) }
                return state.snapshotAgain
            }
            if again { takeSnapshot(view) }
        }
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

/// A page message waiting for its turn, with the reply to call on the main thread.
struct QueuedMessage: Sendable {
    let message: BridgeMessage
    let reply: MainThreadObject<(Result<String, BridgeRefusal>) -> Void>
}
