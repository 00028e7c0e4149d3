import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation

/// The control endpoints of `clientctl serve` with an apply driver behind them
/// (docs/apply-policies.md#serve): the updater's answers (`UpdaterControl`), plus the
/// page's input activity, its leases and its navigations for the driver. `serve` cannot
/// put a version on screen itself: when the policy allows a switch, the status says
/// `switchNow` and the page's shim switches and reloads (a page that asks is alive, so
/// the trial has a page to acknowledge it); a navigation switches first too.
package struct AgentControl: ControlHandler {
    private let control: UpdaterControl
    private let apply: ApplyDriver
    /// The agent's download holds.
    private let downloads: DownloadHolds
    /// The agent's count of the page's problems.
    private let problems: PageProblems
    /// The root whose channel the page may choose (`setChannel`).
    private let layout: RootLayout

    /// Answers for `agent`'s updater and feeds its apply driver; a page's check runs
    /// through the agent, so the driver knows it downloads.
    package init(_ agent: DeviceAgent) {
        control = UpdaterControl(agent.updater, check: { _ = try await agent.checkForUpdates() })
        apply = agent.apply
        downloads = agent.downloadHolds
        problems = agent.pageProblems
        layout = agent.updater.layout
        apply.switchThroughPages()
    }

    package func startupDidComplete() async throws -> ControlStatus { try await startupDidComplete(version: nil) }
    package func checkForUpdates() async throws -> ControlStatus { try await checkForUpdates(version: nil) }
    package func switchToPendingVersion() async throws -> ControlStatus { try await switchToPendingVersion(version: nil) }

    package func startupDidComplete(version: String?) async throws -> ControlStatus {
        let status = try await control.startupDidComplete(version: version)
        problems.acknowledged(version: version ?? status.current ?? RunningVersion.embedded.description)
        return status
    }

    /// The page's errors after its acknowledgement (the shim's `problems`): `count` uncaught
    /// errors and unhandled rejections with a few messages, and its own problems' kinds
    /// (`reportProblem(kind)`), for the version it was served with (docs/page-errors.md).
    /// - Throws: `EngineError` `.invalidArgument` for an app kind that is not a word.
    package func pageProblems(errors count: Int64, messages: [String], appKinds: [String], version: String?) async throws {
        var served = version
        if served == nil { served = try await control.status().current ?? RunningVersion.embedded.description }
        let version = served ?? RunningVersion.embedded.description
        problems.pageErrors(count, messages: messages, version: version)
        for kind in appKinds { try problems.appProblem(kind, version: version) }
    }
    package func checkForUpdates(version: String?) async throws -> ControlStatus {
        try await control.checkForUpdates(version: version)
    }
    /// The page's switch: with the policy's trigger when the policy allows it now.
    package func switchToPendingVersion(version: String?) async throws -> ControlStatus {
        _ = try await apply.switchForPage(from: version)
        return try await status()
    }
    package func status() async throws -> ControlStatus {
        var status = try await control.status()
        if let pending = status.pending, apply.allowedSwitch() == pending { status.switchNow = true }
        return status
    }
    package func events() async -> AsyncStream<ControlEvent> { await control.events() }

    package func userActivity(version: String?) async {
        apply.noteInput()
    }

    package func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date {
        apply.hold(lease: "page-" + lease, for: min(duration, ApplyDriver.maxLease))
    }

    /// A page's download hold (the shim's leases are `page-…`), or a local process's, named
    /// by its lease: `POST /__clientctl/hold-downloads` (docs/download-policy.md#holds).
    package func holdDownloads(lease: String, for duration: Duration, version: String?) async throws -> Date {
        downloads.hold(lease: lease, holder: lease.hasPrefix("page-") ? "the page" : "process \(Quoting.quoted(lease))", for: duration)
    }

    package func pageNavigates() async {
        guard apply.waitsForNavigation else { return }
        _ = await apply.navigated()
    }

    /// The root's channel choice (docs/targeting.md#choosing-a-channel).
    package func channels() async throws -> ControlChannels { try await PageChannels.read(layout) }

    /// The page chooses a channel under the rule of `clientctl channel set`: the agent
    /// follows it from its next check (the page may ask for one with `checkForUpdates`).
    package func setChannel(_ name: String, version: String?) async throws -> ControlChannels {
        try await PageChannels.set(name, layout: layout)
    }
}
