import ClientShim
import Synchronization

/// What answers the `/__clientctl/` endpoints, attached and detached while serving.
final class ControlSlot: Sendable {
    private let current = Mutex<(any ControlHandler)?>(nil)

    var handler: (any ControlHandler)? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
