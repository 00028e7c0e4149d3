/// Tells whoever started a check how an install went about it, in one line each: which
/// path a delta update took ("patch from 1.2.0: 51,234 bytes instead of the 3,101,877-byte
/// archive") or why it fell back to the full archive.
///
/// Channels call ``report(_:)``; the ``Updater`` hands each note to its event stream as
/// ``UpdaterEvent/installNote(_:)``, in order with the download progress (`clientctl
/// install` prints them on stderr, a host app may log them). Notes never change what a
/// check does.
package enum InstallNotes {
    /// Receives one note.
    package typealias Handler = @Sendable (String) -> Void

    /// A class in the task-local, not the closure itself (see ``DownloadProgress``).
    final class Box: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }
    @TaskLocal static var box: Box?

    /// Runs `operation` with `handler` receiving the notes of the checks it runs (the
    /// updater's binding; hosts read ``Updater/events(bufferingPolicy:)``).
    package static func withHandler<R>(
        _ handler: Handler?, isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> R
    ) async rethrows -> R {
        try await $box.withValue(handler.map { Box($0) }, operation: operation, isolation: isolation)
    }

    /// Hands `note` to the current handler, if any.
    package static func report(_ note: String) {
        box?.handler(note)
    }
}
