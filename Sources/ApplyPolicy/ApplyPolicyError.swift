/// The one error type of the `ApplyPolicy` module.
///
/// Every refusal (a malformed `--apply`, `--deadline`, `--grace` or window value, an unknown time zone, a rollout
/// restriction that would hurry devices) is reported as an `ApplyPolicyError`. The ``message`` is a single line that
/// names the offending value (quoted, with control characters escaped), says why it is refused and suggests the valid
/// form, so a command can print it as is.
package struct ApplyPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of value was refused; stable for callers that map errors to exit codes or flags.
    package enum Code: Sendable, Equatable {
        /// An apply mode that is not one of `next-start`, `next-navigation`, `idle`, `window`, `now`,
        /// or a mode that lacks a value it needs (`idle` without idle seconds).
        case invalidMode
        /// A maintenance window that is not `HH:MM-HH:MM` within 00:00–24:00, or that is empty.
        case invalidWindow
        /// A time zone that is not an accepted IANA identifier (see ``MaintenanceWindow/acceptedTimeZone(_:)``).
        case invalidTimeZone
        /// A duration (grace, idle seconds, duration text) that is malformed or out of range.
        case invalidDuration
        /// A deadline that is malformed, has no explicit zone, or is not after the release time.
        case invalidDeadline
        /// A rollout restriction that would make devices switch sooner than the release allows.
        case notAllowedByRestriction
        /// A download rate or metered mode that does not read (docs/download-policy.md).
        case invalidDownloadPolicy
    }

    /// What kind of value was refused.
    package let code: Code
    /// One line: the offending value, why it is refused and the valid form.
    package let message: String

    /// Creates an error; `message` must already be a single line (values quoted with ClientFoundation's `Quoting.quoted(_:)`).
    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The ``message``.
    package var description: String { message }
}
