import ClientUpdater
import CommandSupport
import Foundation

/// Output shared by `reload`, `ack`, `rollback`: the serving folder on stdout (data),
/// what happened on stderr (messages), or the whole report with `--json`.
enum LifecycleOutput {
    static func print(_ report: LifecycleReport, json: Bool, folder: Bool = true) {
        if json {
            do { try printJSON(report) } catch { printError("clientctl: cannot encode the report: \(error)") }
            return
        }
        for line in report.events { printError(line) }
        printError(
            "current: \(report.current)" + (report.trial != nil ? " (on trial)" : "")
                + (report.lastKnownGood.map { ", last known good: \($0)" } ?? ""))
        if folder, let dir = report.servingDirectory { Swift.print(dir) }
    }
}
