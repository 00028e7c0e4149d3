internal import CWebKitGTK
import ClientEngine
import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import ServingCore
import ShellRules

/// The page's side of a shell run: its messages to the engine, the view's input, leases,
/// navigations and dialogs for the apply driver and the run's events.
extension ShellRun {
    /// The page's messages go to the engine; the window's close ends the run.
    func connect(_ view: ShellView, engine: DeviceEngine, agent: DeviceAgent, core: ServingCore) {
        let apply = agent.apply
        let downloads = agent.downloadHolds
        let problems = agent.pageProblems
        // The page's errors after its acknowledgement (docs/native-shell.md#errors-after-start).
        let errorCounts = PageErrorCounts(view: view) { [log] count, messages, version in
            problems.pageErrors(count, messages: messages, version: version)
            // Shown as the report keeps them: no control, format or line separator character.
            log.emit("pageErrors", ["version": version, "count": count, "messages": messages.map(ProblemTally.oneLine)])
        }
        errorCounts.install()
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
            onAcknowledged: { [self] version, load in
                pageStart?.acknowledged(version)
                // Once per page load: the load is counted, and its errors from now on.
                GMain.async {
                    guard let version, view.loadGeneration == load, view.acknowledgedVersion == nil, view.pageVersion == version else { return }
                    view.acknowledgedVersion = version
                    problems.acknowledged(version: version)
                    errorCounts.startCounting()
                }
                GMain.after(.milliseconds(200)) { self.takeSnapshot(view) }
            },
            hold: { seconds in apply.hold(lease: "page", for: .seconds(clamping: seconds, limit: ApplyDriver.maxLease)) },
            holdDownloads: { seconds in
                downloads.hold(lease: "page", holder: "the page", for: .seconds(clamping: seconds, limit: DownloadHoldLeases.maxLease))
            },
            reportProblem: { kind, version in
                var counted = version
                if counted == nil { counted = try await UpdaterControl(engine.updater).status().current }
                try problems.appProblem(kind, version: counted ?? RunningVersion.embedded.description)
            },
            channels: { [layout = engine.layout] name in
                if let name { return try await PageChannels.set(name, layout: layout) }
                return try await PageChannels.read(layout)
            })
        // The switch to a staged version (docs/apply-policies.md#the-native-shell): idle time
        // from the view's own input; a page's lease ends with its page and its web process;
        // a top-level navigation of the app waits while a staged version takes over.
        view.watchInput()
        view.onInput = { apply.noteInput() }
        view.onPageReplaced = {
            apply.releaseLeases()
            downloads.release()
        }
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
        let errorLines = LineThrottle(clock: engine.monotonic)
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
        let recovery = PageRecovery(updater: engine.updater, view: view, log: log, clock: engine.monotonic)
        let watch = PageStartWatch(
            updater: engine.updater, view: view, log: log, timeout: engine.config.startupTimeout, clock: engine.monotonic)
        state.withLock { $0.pageStart = watch }
        view.onWebProcessTerminated = { reason, version, byShell, acknowledged in
            apply.releaseLeases()  // a lease dies with its web process
            downloads.release()
            // After the page's acknowledgement a death counts among its problems; before it,
            // it is the trial's (PageRecovery); the shell's own ends are not the page's.
            if let acknowledged, !byShell { problems.webProcessDied(version: acknowledged, reason: reason) }
            recovery.terminated(reason: reason, version: version, byShell: byShell)
        }
        view.bridgeGuard.refusals.onReport = { [log] counts in log.emit("bridgeRefused", CoalescedCounts.fields(counts)) }
        view.dialogs.refusals.onReport = { [log] counts in log.emit("dialogRefused", CoalescedCounts.fields(counts)) }
        view.dialogs.onOpened = { [log] kind in log.emit("dialogOpened", ["kind": kind.rawValue]) }
        view.dialogs.onClosed = { [log] kind, reason in log.emit("dialogClosed", ["kind": kind.rawValue, "reason": reason]) }
        view.onClose = { gtk_main_quit() }
    }
}

/// A page message waiting for its turn, with the reply to call on the main thread.
struct QueuedMessage: Sendable {
    let message: BridgeMessage
    let reply: MainThreadObject<(Result<String, BridgeRefusal>) -> Void>
}
