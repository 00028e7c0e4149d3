import ArchivePublishing
import ArgumentParser
import ClientFoundation
import Foundation
import SafeArchive
import SignedManifest

/// `--format`: one of the archive formats; argument-parser lists them in help and refuses
/// anything else while parsing.
extension ArchiveFormat: ExpressibleByArgument {}

/// `--expires`: an RFC 3339 UTC time or `Nd` (N days from the moment of publishing), by
/// ``Publisher/parseExpiry(_:now:)``'s rule; anything else is refused while parsing.
struct Expiry: ExpressibleByArgument, Sendable, Equatable {
    let text: String

    init?(argument: String) {
        guard Publisher.parseExpiry(argument, now: Date()) != nil else { return nil }
        text = argument
    }

    /// The expiry time for a release published at `now`.
    func date(now: Date) throws -> Date {
        guard let date = Publisher.parseExpiry(text, now: now) else {
            throw CommandError(.invalidArgument, "--expires \(text) is neither an RFC 3339 UTC time nor Nd")
        }
        return date
    }
}
