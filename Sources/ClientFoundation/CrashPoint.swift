import Foundation

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
        /// Marks that execution reached `name`; dies here when a crash test asked for it.
        ///
        /// The plan is ``FaultPoint``'s (one plan, read once); a fault planned here is never
        /// met: a point where a write can fail calls ``FaultPoint/hit(_:failing:)`` instead,
        /// which kills the same way.
        @inline(__always)
        package static func hit(_ name: StaticString) {
            guard let plan = DebugPlan.current else { return }
            _ = plan.reach(name.description, faults: false)
        }
    #else
        /// Does nothing: crash points exist only in debug builds.
        @inline(__always)
        package static func hit(_ name: StaticString) {}
    #endif
}
