import ClientFoundation
import Foundation

/// `reports/state.json`.
struct JournalState: Codable, Equatable {
    var lastSeq: Int64 = 0
    var deliveredThrough: Int64 = 0
    var dropped: Int64 = 0
    var lastAttempt: Int64?
    var lastFailure: String?
    var lastSuccess: Int64?
    /// The time of the last report delivered (ms), for the heartbeat rule once the journal is empty.
    var lastTime: Int64?
    /// The stream of schema-2 batches (16 hex digits); a lost state starts a new one.
    var stream: String?
    /// The last `check-refused` recorded (``ReportDraft/refusalKey``) and when (ms), while no
    /// other report followed it: the same refusal again within the heartbeat interval is
    /// not recorded (a device waiting for its rollout place refuses at every check).
    var lastRefusal: String?
    var lastRefusalTime: Int64?

    /// 64 random bits as 16 lowercase hex digits.
    static func newStream() -> String {
        var rng = SystemRandomNumberGenerator()
        return String(UInt64.random(in: 1...UInt64.max, using: &rng), radix: 16).leftPadded(to: 16)
    }

    static func read(_ layout: RootLayout) -> JournalState {
        guard let data = try? BoundedFile.read(layout.reportsState, cap: 64 * 1024, code: UpdaterError.Code.corruptState),
            let state = try? JSONDecoder().decode(JournalState.self, from: data)
        else { return JournalState() }
        return state
    }

    @discardableResult
    func write(_ layout: RootLayout) -> Bool {
        guard let data = try? JSONEncoder().encode(self) else { return false }
        do {
            try AtomicFile.write(data + Data("\n".utf8), to: layout.reportsState)
            return true
        } catch {
            return false
        }
    }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}

extension String {
    fileprivate func leftPadded(to count: Int) -> String { String(repeating: "0", count: max(0, count - self.count)) + self }
}
