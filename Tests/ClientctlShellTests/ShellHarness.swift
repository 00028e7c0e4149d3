import Foundation
import TestSupport

/// Runs the built `clientctl-shell` as a user would, in a real GTK window on a virtual X
/// display (`xvfb-run`, Debian's xvfb and xauth: Scripts/test installs them), with
/// `--events` so the test reads what happened.
enum ShellHarness {
    /// One `--events` line.
    struct Event: Decodable, Sendable, CustomStringConvertible {
        var event: String
        var ms: Int
        var version: String?
        var kind: String?
        var revertedTo: String?
        var onTrial: String?
        var message: String?
        var action: String?
        var path: String?
        var uri: String?
        /// `webProcessTerminated`, `navigationRefused`, a failed `watchdog`: why.
        var reason: String?
        /// `webProcessTerminated`: deaths in a row, the reload's delay, or the trial it failed.
        var deaths: Int?
        var reloadInMs: Int?
        var trialFailed: Bool?
        /// `networkProcessTerminated`: the process that ended and whether the page was reloaded.
        var pid: Int?
        var reloaded: Bool?
        /// `loadFailed`: failures in a row (the reload's delay is `reloadInMs`).
        var failures: Int?
        /// `pageNotStarting`: the step of the rule (1–3), what it does (`reload`,
        /// `clear-storage`, `seed`), why the page was watched (`rollback`, `start`) and how
        /// long it waited; `pageStarted`: the steps it took.
        var step: Int?
        var remedy: String?
        var after: String?
        var waitedMs: Int?
        var steps: Int?
        /// `bridgeRefused`: counts since start, by reason.
        var notTopFrame: Int?
        var notApp: Int?
        var tooLarge: Int?
        var malformed: Int?
        var queueFull: Int?
        /// `bridgeRefused`: calls read and refused (an unknown action…).
        var callRefused: Int?
        /// `dialogRefused`: counts since start, by kind (`kind` and `reason` for
        /// `dialogOpened` and `dialogClosed`).
        var print: Int?
        var alert: Int?
        var confirm: Int?
        var prompt: Int?
        var total: Int?
        /// `pageErrors`: errors counted since the last one, and up to three of their messages.
        var count: Int?
        var messages: [String]?
        var description: String {
            [event, kind, version, revertedTo.map { "→ \($0)" }, reason, action, message, uri, total.map { "total \($0)" }].compactMap { $0 }
                .joined(separator: " ")
        }
    }

    struct Run: Sendable {
        var status: Int32
        var events: [Event]
        var stderr: String
        var summary: String { "exit \(status); events: \(events.map(\.description)); stderr: \(stderr)" }

        func watchdog(_ kind: String, _ version: String) -> Event? {
            events.first { $0.event == "watchdog" && $0.kind == kind && $0.version == version }
        }
        var lastSnapshot: Event? { events.last { $0.event == "snapshot" } }
    }

    /// Runs the shell on `root` until `exitAfter` seconds have passed, with `environment`
    /// set for the shell alone (through `env`: the X server must not see it, Xvfb answers
    /// a `NOTIFY_SOCKET` with a `READY=1` of its own).
    static func run(root: String, exitAfter: Double, arguments: [String] = [], environment: [String: String] = [:]) async throws -> Run {
        let variables = environment.isEmpty ? [] : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let result = try await Subprocess.run(
            "xvfb-run",
            ["-a", "-s", "-screen 0 1280x1024x24"] + variables
                + [ClientctlBinary.shellPath, "--root", root, "--events", "--exit-after", String(exitAfter)] + arguments,
            gate: nil)
        let decoder = JSONDecoder()
        let events = result.output.split(separator: "\n").compactMap { try? decoder.decode(Event.self, from: Data($0.utf8)) }
        return Run(status: result.status, events: events, stderr: result.errorOutput)
    }

    /// Runs the shell on `root` until its events satisfy `condition`, then ends it as
    /// `systemctl stop` does (SIGTERM) and returns the run: what a test checks is awaited,
    /// not assumed to fit in a fixed `--exit-after` on a machine whose cores the rest of the
    /// suite shares. `timeout` (generous) bounds a shell that never gets there; the failure
    /// names `what` with the events so far.
    static func run(
        root: String, until what: String, timeout: Double = 120, arguments: [String] = [], environment: [String: String] = [:],
        _ condition: @escaping ([Event]) -> Bool
    ) async throws -> Run {
        let scratch = try TemporaryDirectory("shell-run")
        let shell = try RunningShell(
            root: root, exitAfter: timeout + 60, arguments: arguments, environment: environment, scratch: scratch.path)
        return try await shell.stop(when: what, timeout: timeout, condition)
    }

    /// A page script that paints the whole page `colour` (`#rrggbb`) and then runs `then`.
    static func paint(_ colour: String, then script: String = "") -> String {
        "document.documentElement.style.background = '\(colour)'; document.body.style.background = '\(colour)';\n" + script
    }
}
