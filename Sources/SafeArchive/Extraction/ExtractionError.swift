import ClientFoundation

/// Why ``SafeExtractor`` refused an archive, before it becomes the module's
/// ``SafeArchiveError`` at the boundary (see ``safeArchiveError``).
///
/// The ``message`` is one line that names the archive entry (when there is one) and the
/// reason, e.g. `archive entry "../evil.txt" rejected: ".." path component`.
struct ExtractionError: Error {
    /// What kind of failure this is. New codes may be added in later versions.
    struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case entryRejected, limitExceeded, corrupt, unsupported, missingIndex, empty
            case alreadyExists, io, internalError
        }
        fileprivate let base: Base
        var description: String { "\(base)" }

        /// An entry refused by the entry rule: its name, its type, a duplicate or a conflict.
        static let entryRejected = Code(base: .entryRejected)
        /// A cap of ``ExtractionLimits`` was passed: bytes, entries or compression ratio.
        static let limitExceeded = Code(base: .limitExceeded)
        /// The archive is damaged: truncated, bad checksum or CRC, inconsistent zip directory.
        static let corrupt = Code(base: .corrupt)
        /// Not a tar.gz, tar.zst or zip archive, nested compression, or an unsupported feature.
        static let unsupported = Code(base: .unsupported)
        /// The archive has no `index.html` regular file at its root.
        static let missingIndex = Code(base: .missingIndex)
        /// The archive has no entries at all.
        static let empty = Code(base: .empty)
        /// The staging folder exists already.
        static let alreadyExists = Code(base: .alreadyExists)
        /// A system call on the file system failed while unpacking.
        static let io = Code(base: .io)
        /// An unexpected failure of libarchive or of this code: a bug.
        static let internalError = Code(base: .internalError)
    }

    /// What kind of failure this is.
    var code: Code
    /// The archive entry concerned, quoted and escaped for display (see ``init(_:entryName:_:underlying:)``).
    var entry: String?
    /// Why the archive was refused, without the entry name.
    var reason: String
    /// The underlying cause, when there is one.
    var underlying: (any Error & Sendable)?

    /// Creates an error about the whole archive, or about an entry whose name is already
    /// quoted for display.
    init(_ code: Code, entry: String? = nil, _ reason: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.entry = entry
        self.reason = reason
        self.underlying = underlying
    }

    /// Creates an error about the entry whose raw name bytes are `entryName`; the name is
    /// quoted, with `"`, `\`, control characters and bytes that are not UTF-8 escaped.
    init(_ code: Code, entryName: some Collection<UInt8>, _ reason: String, underlying: (any Error & Sendable)? = nil) {
        self.init(code, entry: displayName(entryName), reason, underlying: underlying)
    }

    /// For a refused archive: `archive entry "<name>" rejected: <reason>`, or
    /// `archive rejected: <reason>` when no entry is concerned. For a local failure (file
    /// system, staging folder exists, bug): `cannot unpack archive entry "<name>": <reason>`
    /// or `cannot unpack archive: <reason>`.
    var message: String {
        switch (code.base, entry) {
        case (.alreadyExists, let entry?), (.io, let entry?), (.internalError, let entry?):
            return "cannot unpack archive entry \(entry): \(reason)"
        case (.alreadyExists, nil), (.io, nil), (.internalError, nil):
            return "cannot unpack archive: \(reason)"
        case (_, let entry?):
            return "archive entry \(entry) rejected: \(reason)"
        case (_, nil):
            return "archive rejected: \(reason)"
        }
    }

    /// The module's error: `archiveRejected` for the entry rule, unsupported kinds, a
    /// missing index.html or an empty archive; `archiveLimit` for caps; `archiveFailed`
    /// for damaged archives; `alreadyExists`, `io` and `internalError` as named.
    var safeArchiveError: SafeArchiveError {
        let mapped: SafeArchiveError.Code
        switch code.base {
        case .entryRejected, .unsupported, .missingIndex, .empty: mapped = .archiveRejected
        case .limitExceeded: mapped = .archiveLimit
        case .corrupt: mapped = .archiveFailed
        case .alreadyExists: mapped = .alreadyExists
        case .io: mapped = .io
        case .internalError: mapped = .internalError
        }
        return SafeArchiveError(mapped, message, underlying: underlying)
    }
}

/// Quotes a raw entry name for error messages: printable UTF-8 as is, `"` and `\` escaped,
/// control characters as `\u{X}` and bytes that are not UTF-8 as `\xNN`.
func displayName(_ bytes: some Collection<UInt8>) -> String {
    let raw = Array(bytes)
    var out = "\""
    var index = 0
    while index < raw.count {
        var decoder = UTF8()
        var iterator = raw[index...].makeIterator()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
            out += "\\x" + (raw[index] < 16 ? "0" : "") + String(raw[index], radix: 16)
            index += 1
            continue
        }
        index += UTF8.width(scalar)
        if scalar == "\"" || scalar == "\\" {
            out += "\\" + String(scalar)
        } else if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
