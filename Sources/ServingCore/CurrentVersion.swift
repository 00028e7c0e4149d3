import Synchronization

/// The pointer to the version being served: reading and flipping it are single
/// lock-protected loads and stores of an immutable `Sendable` reference.
package final class CurrentVersion: Sendable {
    private let current = Mutex<ServedVersion?>(nil)

    package init() {}

    package var version: ServedVersion? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
