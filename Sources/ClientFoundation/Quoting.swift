/// How user text appears in the one-line messages of DeviceIdentity and DeviceTargeting.
package enum Quoting {
    /// Texts are cut to this many Unicode scalars in messages.
    package static let maxCharacters = 64

    /// `text` in single quotes, with control characters (including newlines) and line or paragraph
    /// separators escaped as `\u{…}` so the message stays on one line, cut to 64 characters followed by `…`.
    package static func quoted(_ text: String) -> String {
        "'" + escaped(text, limit: maxCharacters) + "'"
    }

    /// `text` with control characters escaped as `\u{…}`, cut to `limit` characters followed by `…`.
    package static func escaped(_ text: String, limit: Int) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "…"
                break
            }
            out += escaped(scalar)
            count += 1
        }
        return out
    }

    /// One scalar as it appears in a message: as is, or `\u{…}` (lowercase hex) when it is a control
    /// character, a format character or a line or paragraph separator.
    package static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator:
            return "\\u{" + String(scalar.value, radix: 16) + "}"
        default:
            return String(scalar)
        }
    }
}
