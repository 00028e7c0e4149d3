import Foundation

/// What a device does about a staged version at one moment: switch to it now, keep waiting (and for what), or
/// nothing because it already switched. Produced by ``decide(_:now:)``; ``nextWake(_:now:)`` says when to ask again.
package enum ApplyDecision: Sendable, Equatable, CustomStringConvertible {
    /// Switch to the staged version now, for the given reason.
    case switchNow(trigger: Trigger)
    /// Keep running the current version; the payload says what the switch waits for.
    case wait(Wait)
    /// This version already took over; a version never switches twice.
    case done

    /// Why a switch happens now.
    package enum Trigger: String, Sendable, Equatable, CustomStringConvertible {
        /// Mode `now`.
        case now
        /// Mode `idle`: no input for the policy's idle seconds.
        case idle
        /// Mode `window`: a maintenance window is open.
        case window
        /// Past the deadline and idle for the policy's idle seconds (default 60).
        case deadline
        /// Deadline plus grace reached: switch whatever else holds.
        case graceExpired

        /// A short reason for status lines, e.g. `deadline grace expired`.
        package var description: String {
            switch self {
            case .now: "mode now"
            case .idle: "device idle"
            case .window: "inside a maintenance window"
            case .deadline: "deadline passed and device idle"
            case .graceExpired: "deadline grace expired"
            }
        }
    }

    /// What a waiting switch waits for; instants are known earliest moments, not promises.
    package enum Wait: Sendable, Equatable, CustomStringConvertible {
        /// A trial of another version is running (never switch during a trial, even past the deadline).
        case trial
        /// A download is running (never switch during a download, even past the deadline).
        case download
        /// Mode `next-start`: the host's next start.
        case nextStart
        /// Mode `next-navigation`: the page's next top-level navigation.
        case nextNavigation
        /// Mode `idle`: the earliest moment the device is idle long enough if no more input arrives.
        case idle(until: Date)
        /// Mode `window`: the earliest opening among the device's windows and that window. `opens` is nil when no
        /// window opens within 8 days; both are nil when the device has no window at all (it would wait forever
        /// unless a deadline is set).
        case window(opens: Date?, window: MaintenanceWindow?)
        /// A live page lease, until its expiry (or the deadline, whichever is first).
        case lease(until: Date)
        /// Past the deadline, waiting for an idle moment: `until` is when the device is idle long enough if no more
        /// input arrives, or deadline + grace, whichever is first.
        case deadlineIdle(until: Date)

        /// A status line, e.g. `waiting for maintenance window 02:00–04:00 Europe/Berlin (opens 2026-03-29T01:00:00Z)`.
        package var description: String {
            switch self {
            case .trial:
                return "waiting: another version's trial is running"
            case .download:
                return "waiting: a download is running"
            case .nextStart:
                return "waiting for the next start"
            case .nextNavigation:
                return "waiting for the page's next navigation"
            case .idle(let until):
                return "waiting for the device to be idle (at \(RFC3339Time.string(from: until)) if no more input arrives)"
            case .window(let opens?, let window?):
                return "waiting for maintenance window \(window) (opens \(RFC3339Time.string(from: opens)))"
            case .window(let opens?, nil):
                return "waiting for a maintenance window (opens \(RFC3339Time.string(from: opens)))"
            case .window(nil, let window?):
                return "waiting for maintenance window \(window), which does not open within 8 days"
            case .window(nil, nil):
                return "waiting for a maintenance window, but this device has none (mode window switches only inside one)"
            case .lease(let until):
                return "waiting: a page holds a lease until \(RFC3339Time.string(from: until))"
            case .deadlineIdle(let until):
                return "past the deadline: switching at the next idle moment (at \(RFC3339Time.string(from: until)) if no more input arrives)"
            }
        }
    }

    /// A status line: `already switched to this version`, `switch now (device idle)`, or the ``Wait`` description.
    package var description: String {
        switch self {
        case .switchNow(let trigger): "switch now (\(trigger))"
        case .wait(let wait): wait.description
        case .done: "already switched to this version"
        }
    }
}
