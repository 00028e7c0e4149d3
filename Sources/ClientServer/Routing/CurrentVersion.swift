import ClientShim
import ClientUpdater
import Foundation

/// The pointer to the version being served and the attached control handler; reading
/// and flipping it are single lock-protected reference loads and stores.
final class CurrentVersion: @unchecked Sendable {
    // Both fields are guarded by `lock`; they hold immutable `Sendable` references.
    private let lock = NSLock()
    private var _version: ServedVersion?
    private var _handler: (any ControlHandler)?

    var version: ServedVersion? {
        get { lock.withLock { _version } }
        set { lock.withLock { _version = newValue } }
    }

    var handler: (any ControlHandler)? {
        get { lock.withLock { _handler } }
        set { lock.withLock { _handler = newValue } }
    }
}
