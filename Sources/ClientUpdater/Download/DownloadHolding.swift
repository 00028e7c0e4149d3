import ClientFoundation
import Foundation

/// Who holds the device's downloads back now, and until when: a page in the middle of a
/// video call (`WebAppLocalServer.holdDownloads(seconds)`) or a local process, each under a
/// bounded, renewable lease (docs/download-policy.md#holds).
package struct DownloadHold: Sendable, Equatable {
    /// Who holds, for `status --explain`: `the page`, `process 'backup'`.
    package var holders: [String]
    /// When the last lease in force ends, on the device's wall clock.
    package var until: Date

    package init(holders: [String], until: Date) {
        self.holders = holders
        self.until = until
    }
}

/// The seam the download policy reads holds through: the agent's lease registry in a host,
/// nothing in a one-shot command, a test's answer in a test.
package protocol DownloadHolding: Sendable {
    /// The hold in force now; `nil` when no lease holds downloads.
    func current() -> DownloadHold?
    /// Returns once a hold is taken (at once when one is in force): the download in flight
    /// stops there, keeping what it has, and resumes from it at the next allowed moment.
    /// Throws only on cancellation.
    func waitForHold() async throws
}

/// No holds: a one-shot command (`clientctl install`), which no page can hold.
package struct NoDownloadHolds: DownloadHolding {
    package init() {}
    package func current() -> DownloadHold? { nil }
    /// Never returns until the task is cancelled: no hold is ever taken. It waits at a latch
    /// that no one opens, so it reads no clock and wakes no thread.
    package func waitForHold() async throws {
        try await Latch().wait()
    }
}
