/// Where the events of one check go while it runs: how an install went about it, in one
/// line each ("patch from 1.2.0: 51,234 bytes instead of the 3,101,877-byte archive", or
/// why it fell back to the full archive), and how far a download is.
///
/// The ``Updater`` passes one to ``UpdateChannel/check(state:reporter:)``; the channel
/// hands it on down its download and install path, onto whatever thread the transport
/// reports bytes on: a plain value, nothing bound to a task. The updater's reporter
/// turns each report into ``UpdaterEvent/installNote(_:)`` or
/// ``UpdaterEvent/downloadProgress(version:completed:total:)`` on its event stream,
/// in order (`clientctl install` prints notes on stderr and draws the progress bar; a
/// host app may log them). Reports never change what a check does.
package struct CheckReporter: Sendable {
    /// Receives one install note.
    package typealias Note = @Sendable (String) -> Void
    /// Receives `(version, completedBytes, totalBytes)`.
    package typealias Progress = @Sendable (String, Int64, Int64?) -> Void

    private let onNote: Note?
    private let onProgress: Progress?

    package init(note: Note? = nil, progress: Progress? = nil) {
        self.onNote = note
        self.onProgress = progress
    }

    /// Reports nothing (a channel's check called on its own).
    package static let silent = CheckReporter()

    /// Hands `note` on.
    package func note(_ note: String) { onNote?(note) }

    /// Tells how far the download of `version` is.
    package func progress(version: String, completed: Int64, total: Int64?) { onProgress?(version, completed, total) }

    /// The progress receiver, for a downloader's byte counter; nil when nobody listens.
    package var progressHandler: Progress? { onProgress }
}
