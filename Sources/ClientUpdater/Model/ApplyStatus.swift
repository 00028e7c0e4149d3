import ClientFoundation
import Foundation

/// What a running host's apply driver last decided about the staged version
/// (`apply-status.json` in the root, docs/apply-policies.md#status): `clientctl status`
/// shows it, since only the host knows its input, leases and page.
package struct ApplyStatus: Codable, Sendable, Equatable {
    /// The staged version the line is about.
    package var version: String
    /// What it waits for, or what switched it: `waiting for maintenance window 02:00–04:00 Europe/Berlin (opens …)`.
    package var line: String
    /// The policy in one phrase (`window, deadline … + grace 1h`).
    package var policy: String
    /// When the host decided this.
    package var decidedAt: Date
    /// When it decides again at the latest (nil: only on new input).
    package var nextDecision: Date?
    /// The host's process id: a status whose host is gone is shown as such.
    package var pid: Int32

    package init(version: String, line: String, policy: String, decidedAt: Date, nextDecision: Date?, pid: Int32) {
        self.version = version
        self.line = line
        self.policy = policy
        self.decidedAt = decidedAt
        self.nextDecision = nextDecision
        self.pid = pid
    }

    /// The file: `<root>/apply-status.json`.
    package static func path(_ layout: RootLayout) -> String { layout.root + "/apply-status.json" }

    /// The file's status, nil when absent or unreadable (it is only a report).
    package static func read(_ layout: RootLayout) -> ApplyStatus? {
        guard let data = FileManager.default.contents(atPath: path(layout)), data.count <= 16 * 1024 else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(ApplyStatus.self, from: data)
    }

    /// Writes it atomically; a failure is ignored (a full disk must not stop a switch).
    package func write(_ layout: RootLayout) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        try? AtomicFile.write(data + Data("\n".utf8), to: ApplyStatus.path(layout))
    }

    /// Removes the file (nothing is staged any more).
    package static func remove(_ layout: RootLayout) {
        unlink(path(layout))
    }
}
