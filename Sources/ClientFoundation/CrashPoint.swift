import Foundation
import Synchronization

/// Named points where crash tests can make the process die by a real `SIGKILL`.
///
/// Set `CLIENTCTL_CRASH_AT=<name>[:<n>]` and the process kills itself the n-th time
/// (default first) it reaches `name`, exactly as a power cut or an OOM kill would stop
/// it there. Without the variable a hit is one atomic load and a compare.
///
/// Only debug builds (the ones tests run) read the variable: in a release build ``hit(_:)``
/// does nothing, and the type is `package`, so no host sees it.
package enum CrashPoint {
    #if DEBUG
        private struct Plan: Sendable {
            let name: String
            let count: Int
        }

        private static let plan: Plan? = {
            guard let spec = ProcessInfo.processInfo.environment["CLIENTCTL_CRASH_AT"], !spec.isEmpty else { return nil }
            let parts = spec.split(separator: ":", maxSplits: 1)
            return Plan(name: String(parts[0]), count: parts.count > 1 ? max(1, Int(parts[1]) ?? 1) : 1)
        }()

        private static let hits = HitCounter()

        /// Marks that execution reached `name`; dies here when a crash test asked for it.
        @inline(__always)
        package static func hit(_ name: StaticString) {
            guard let plan else { return }
            let text = name.description
            guard text == plan.name else { return }
            if hits.increment() == plan.count {
                kill(getpid(), SIGKILL)
            }
        }

        private final class HitCounter: Sendable {
            private let value = Mutex(0)
            func increment() -> Int {
                value.withLock { value in
                    value += 1
                    return value
                }
            }
        }
    #else
        /// Does nothing: crash points exist only in debug builds.
        @inline(__always)
        package static func hit(_ name: StaticString) {}
    #endif
}
