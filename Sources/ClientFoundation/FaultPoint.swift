import Foundation
import Synchronization

/// Named write points where tests can make the process die (``CrashPoint``) or make the
/// write there fail, as a full or failing disk would.
///
/// Set `CLIENTCTL_FAIL_AT=<name>:<n>:<errno>` and the n-th time the process reaches `name`
/// ``hit(_:failing:)`` throws the error the write at that place throws when it fails with
/// that `errno` (`ENOSPC`, `EIO`, `EDQUOT`, `EROFS`, or a number): the caller's own handling
/// of a failed `write(2)`, `fsync` or `rename` runs, and the process goes on. Hits are counted
/// per name, as crash points count theirs; only the n-th fails. `CLIENTCTL_CRASH_AT` works
/// beside it as before. Both variables are read once, at the first hit of any point; a
/// `CLIENTCTL_FAIL_AT` that cannot be read stops the process there with exit 64 and a line
/// on stderr, so a test never passes because its fault was ignored.
///
/// Only debug builds read the variables: in a release build ``hit(_:failing:)`` does
/// nothing. Without them a hit is one atomic load and a compare.
package enum FaultPoint {
    #if DEBUG
        /// Marks that execution reached `name`: dies here when a crash test asked for it,
        /// throws `failure(errno)` when a fault test asked for a failing write here.
        @inline(__always)
        package static func hit<E: Error>(_ name: StaticString, failing failure: (Int32) -> E) throws(E) {
            guard let plan = DebugPlan.current else { return }
            if let code = plan.reach(name.description) { throw failure(code) }
        }

        /// Marks that execution reached `name` where a failing write returns no error (a
        /// write whose failure is counted, not thrown): dies when a crash test asked for it,
        /// returns the `errno` a fault test asked for here, `nil` otherwise.
        @inline(__always)
        package static func failure(at name: StaticString) -> Int32? {
            guard let plan = DebugPlan.current else { return nil }
            return plan.reach(name.description)
        }

        /// Whether the failure `CLIENTCTL_FAIL_AT` planned has happened in this process
        /// (false without a plan): a process that goes on can say that its fault met it.
        package static var planFailed: Bool { DebugPlan.current?.faultFired ?? false }
    #else
        /// False: fault points exist only in debug builds.
        package static var planFailed: Bool { false }

        /// Does nothing: fault points exist only in debug builds.
        @inline(__always)
        package static func hit<E: Error>(_ name: StaticString, failing failure: (Int32) -> E) throws(E) {}

        /// Always `nil`: fault points exist only in debug builds.
        @inline(__always)
        package static func failure(at name: StaticString) -> Int32? { nil }
    #endif

    /// The `errno` a `CLIENTCTL_FAIL_AT` names: `ENOSPC`, `EIO`, `EDQUOT`, `EROFS`, or a
    /// positive number; `nil` for anything else.
    package static func errno(named text: some StringProtocol) -> Int32? {
        switch text {
        case "ENOSPC": return ENOSPC
        case "EIO": return EIO
        case "EDQUOT": return EDQUOT
        case "EROFS": return EROFS
        default:
            guard let number = Int32(text), number > 0 else { return nil }
            return number
        }
    }
}

#if DEBUG
    /// The crash and fault plan of this process, read once from the environment: one
    /// ``CrashPoint`` kill and one ``FaultPoint`` failure at most, each at the n-th hit of
    /// its point.
    final class DebugPlan: Sendable {
        /// A point and the hit that counts.
        struct Target: Sendable {
            let name: String
            let count: Int
        }

        let crash: Target?
        let fault: (target: Target, code: Int32)?
        private let crashHits = Mutex(0)
        private let faultHits = Mutex(0)

        /// `nil` when neither variable is set: every hit returns at its first compare.
        static let current: DebugPlan? = {
            let environment = ProcessInfo.processInfo.environment
            let crash = environment["CLIENTCTL_CRASH_AT"].flatMap(crashTarget)
            let faultSpec = environment["CLIENTCTL_FAIL_AT"] ?? ""
            var fault: (Target, Int32)?
            if !faultSpec.isEmpty {
                guard let parsed = faultTarget(faultSpec) else {
                    let line =
                        "clientctl: CLIENTCTL_FAIL_AT=\(faultSpec) is not <point>:<n>:<errno> "
                        + "(n at least 1, errno ENOSPC, EIO, EDQUOT, EROFS or a number)\n"
                    FileHandle.standardError.write(Data(line.utf8))
                    exit(FailureKind.usage.exitStatus)
                }
                fault = parsed
            }
            guard crash != nil || fault != nil else { return nil }
            return DebugPlan(crash: crash, fault: fault)
        }()

        private init(crash: Target?, fault: (Target, Int32)?) {
            self.crash = crash
            self.fault = fault.map { (target: $0.0, code: $0.1) }
        }

        /// `<name>[:<n>]`, as `CLIENTCTL_CRASH_AT` has always been read.
        private static func crashTarget(_ spec: String) -> Target? {
            guard !spec.isEmpty else { return nil }
            let parts = spec.split(separator: ":", maxSplits: 1)
            return Target(name: String(parts[0]), count: parts.count > 1 ? max(1, Int(parts[1]) ?? 1) : 1)
        }

        /// `<name>:<n>:<errno>`.
        private static func faultTarget(_ spec: String) -> (Target, Int32)? {
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, let count = Int(parts[1]), count >= 1,
                let code = FaultPoint.errno(named: parts[2])
            else { return nil }
            return (Target(name: String(parts[0]), count: count), code)
        }

        /// Counts a hit of `name`: kills the process at the crash's hit, returns the errno at
        /// the fault's hit (`faults` false: a crash point only, where no write can fail).
        func reach(_ name: String, faults: Bool = true) -> Int32? {
            if let crash, crash.name == name, Self.count(crashHits) == crash.count {
                kill(getpid(), SIGKILL)
            }
            if faults, let fault, fault.target.name == name, Self.count(faultHits) == fault.target.count {
                return fault.code
            }
            return nil
        }

        /// Whether the fault's hit came.
        var faultFired: Bool {
            guard let fault else { return false }
            return faultHits.withLock { $0 } >= fault.target.count
        }

        private static func count(_ hits: borrowing Mutex<Int>) -> Int {
            hits.withLock { value in
                value += 1
                return value
            }
        }
    }
#endif
