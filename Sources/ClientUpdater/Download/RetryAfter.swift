import ClientFoundation
import Foundation

/// A server's `Retry-After` (RFC 9110 §10.2.3): how long it asks a client to wait, as
/// delay-seconds or an HTTP date. The collector's 429 and 503 (report delivery) and the
/// feed's refusals (periodic checks) are read with it.
package enum RetryAfter {
    /// The wait `value` asks for from `now`: delay-seconds, or an HTTP date in any of the
    /// three forms RFC 9110 accepts (a date in the past: no wait); nil when it is neither.
    package static func parse(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text), seconds >= 0 { return .seconds(seconds) }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return .seconds(clamping: date.timeIntervalSince(now))
            }
        }
        return nil
    }
}

extension HTTPStatusFailure {
    /// The HTTP status failure behind `error`, following the chain of `underlying` causes
    /// (a channel's error may carry the transport's).
    package static func found(in error: any Error) -> HTTPStatusFailure? {
        var current: (any Error)? = error
        for _ in 0..<8 {
            guard let error = current else { return nil }
            if let failure = error as? HTTPStatusFailure { return failure }
            current = (error as? any ClientctlError)?.underlying.map { $0 as any Error }
        }
        return nil
    }
}
