import ClientFoundation
import Foundation
import StrictJSON

/// Deadlines as RFC 3339 times, read and written by the one implementation of every signed
/// time (`StrictJSON.RFC3339`, docs/formats.md#times), with the deadline's own rule on top:
/// whole seconds. A signed deadline is UTC (`2026-12-01T00:00:00Z`); what an operator types
/// (`publish --deadline`, `rollout set --deadline`) may carry an offset
/// (`2026-12-01T01:00:00+01:00`, converted to UTC) and lower-case `t`/`z`. Written: UTC,
/// whole seconds, `Z`.
package enum RFC3339Time {
    /// Reads a deadline an operator typed: the signed grammar, or with an offset `±HH:MM`.
    /// - Throws: ``ApplyPolicyError`` with `code` when the text is not such a time.
    package static func date(parsing text: String, field: String, code: ApplyPolicyError.Code) throws -> Date {
        try read(text, typed: true, field: field, code: code)
    }

    /// Reads a deadline of a signed document: the signed grammar only (UTC, `Z`).
    /// - Throws: ``ApplyPolicyError`` with `code` when the text is not such a time.
    package static func signedDate(parsing text: String, field: String, code: ApplyPolicyError.Code) throws -> Date {
        try read(text, typed: false, field: field, code: code)
    }

    private static func read(_ text: String, typed: Bool, field: String, code: ApplyPolicyError.Code) throws -> Date {
        let example = typed ? "e.g. 2026-12-01T00:00:00Z or 2026-12-01T01:00:00+01:00" : "e.g. 2026-12-01T00:00:00Z"
        func refuse(_ reason: String) -> ApplyPolicyError {
            ApplyPolicyError(code: code, message: "\(field) \(Quoting.quoted(text)) \(reason)")
        }
        switch RFC3339.read(text, typed: typed) {
        case .success(let date):
            guard date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970 else {
                throw refuse("has fractional seconds (deadlines are whole seconds, \(example))")
            }
            return date
        case .failure(.shape):
            throw refuse("is not an RFC 3339 time YYYY-MM-DDTHH:MM:SS with a zone (\(example))")
        case .failure(.noZone):
            throw refuse("has no zone (add Z\(typed ? " or an offset such as +01:00" : ""), \(example))")
        case .failure(.offset):
            throw refuse("has an offset: a signed time is UTC (\(example))")
        case .failure(.leapSecond):
            throw refuse("has second 60 (seconds are 00–59; \(example))")
        case .failure(.invalidDate):
            throw refuse("is not a valid date and time (\(example))")
        }
    }

    /// Writes an instant as RFC 3339 in UTC with whole seconds, e.g. `2026-12-01T00:00:00Z` (fractions dropped).
    package static func string(from date: Date) -> String {
        RFC3339.format(date)
    }
}
