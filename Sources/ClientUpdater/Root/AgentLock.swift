import ClientFoundation
import Foundation

/// `<root>/agent.lock`: while an agent (`clientctl serve`, or a host app that called
/// ``Updater/start(bridge:clock:shim:lockWait:)``) runs on a root it holds this `flock`,
/// and it is then the only writer of the watchdog: `reload`, `ack`, `rollback` and `gc`
/// from another process are refused (exit 75) instead of making `state.json` call a
/// version current that the agent does not serve.
///
/// The lock dies with its process (even by SIGKILL), so a crashed agent never blocks a
/// root. Beside it, `<root>/agent.json` says who holds it and where its control
/// endpoints listen, for the refusal message; it is informative only.
enum AgentLock {
    /// Who runs the agent, as written to `agent.json`.
    struct Holder: Codable, Sendable, Equatable {
        var pid: Int32
        /// `http://127.0.0.1:PORT/__clientctl/` once the agent's server listens.
        var control: String?
    }

    static func path(_ layout: RootLayout) -> String { layout.root + "/agent.lock" }
    static func infoPath(_ layout: RootLayout) -> String { layout.root + "/agent.json" }

    /// Taken by an agent at start-up for its whole run; a one-shot command holding it
    /// briefly is waited for, suspending the caller (``FileLock/acquire(path:wait:clock:)``).
    /// - Throws: ``UpdaterError`` `.locked` when another agent runs on the root.
    static func acquireForAgent(_ layout: RootLayout, wait: Duration) async throws -> FileLock {
        let lock = try await acquire(layout, wait: wait)
        try await BlockingExecutor.run { record(Holder(pid: getpid(), control: nil), layout) }
        return lock
    }

    /// Taken by a one-shot watchdog command (`reload`, `ack`, `rollback`, `gc`) for its
    /// duration, without waiting: an agent holds it for hours. No `agent.lock` means no
    /// agent has ever run on the root: nil, and nothing is created (a command that then
    /// fails leaves the root exactly as it was; an agent starting meanwhile waits for the
    /// root's `lock`, which the command holds while it writes).
    /// - Throws: ``UpdaterError`` `.locked` naming the agent when one runs on the root.
    static func acquireForCommand(_ layout: RootLayout) async throws -> FileLock? {
        guard try await BlockingExecutor.run({ FileManager.default.fileExists(atPath: path(layout)) }) else { return nil }
        return try await acquire(layout, wait: .zero)
    }

    static func record(_ holder: Holder, _ layout: RootLayout) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(holder) else { return }
        try? AtomicFile.write(data, to: infoPath(layout))
    }

    /// Drops `agent.json` (the agent's lock is released with its ``FileLock``).
    static func clear(_ layout: RootLayout) {
        unlink(infoPath(layout))
    }

    static func holder(_ layout: RootLayout) -> Holder? {
        guard let data = try? BoundedFile.read(infoPath(layout), cap: 64 * 1024, code: UpdaterError.Code.corruptState) else { return nil }
        return try? JSONDecoder().decode(Holder.self, from: data)
    }

    private static func acquire(_ layout: RootLayout, wait: Duration) async throws -> FileLock {
        do {
            return try await FileLock.acquire(path: path(layout), wait: wait)
        } catch let error as UpdaterError where error.code == .locked {
            let who =
                holder(layout).map { h in
                    "pid \(h.pid)" + (h.control.map { ", control endpoints \($0)" } ?? "")
                } ?? "another process"
            throw UpdaterError(
                .locked,
                "clientctl serve (\(who)) runs on \(layout.root) and is the only writer of its watchdog while it runs: use the page's WebAppLocalServer API (startupDidComplete, switchToPendingVersion) or stop serve first"
            )
        }
    }
}
