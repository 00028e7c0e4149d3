import ClientFoundation

/// The cause a channel's error carries when ``UpdateChannel/servedAssets(for:)`` cannot list
/// a version's files for serving (a stored name the organizer refuses, a tree that cannot
/// be read): the `UpdateChannel` contract's seam for that failure, so a channel throws its
/// own module's error and the updater still knows it.
///
/// The watchdog fails such a version like a crashed trial and tries the next one
/// (``UpdaterError/makesVersionUnservable(_:)``), so a version that cannot be laid out never
/// stops start-up.
package struct UnservableVersion: Error, Sendable, Equatable {
    /// The version that cannot be served.
    package var id: String

    package init(id: String) {
        self.id = id
    }
}

extension UpdaterError {
    /// Whether `error`, thrown while a version was laid out for serving, says that version
    /// cannot be served: the organizer's `.invalidArgument` (a name or id it refuses) or
    /// `.notFound` (a missing file), or any module's error whose cause is an
    /// ``UnservableVersion``.
    package static func makesVersionUnservable(_ error: any Error) -> Bool {
        if let error = error as? UpdaterError { return error.code == .invalidArgument || error.code == .notFound }
        return (error as? any ClientctlError)?.underlying is UnservableVersion
    }
}
