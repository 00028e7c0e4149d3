/// Escaping of text and attribute values for the fleet page: every string that came from a
/// device or a collector goes through here before it reaches the HTML.
package enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, so it is
    /// text in an element and in a quoted attribute value alike (HTML Living Standard,
    /// "serializing HTML fragments" escapes the same characters).
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters other than tab and newline have no business in the page.
                if character.value < 0x20 && character != "\t" && character != "\n" || character.value == 0x7F {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(character)
                }
            }
        }
        return out
    }
}
