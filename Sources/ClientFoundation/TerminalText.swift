/// Text that came from elsewhere (a collector's error line, a fleet summary's device ids, a
/// server's message) made safe to print on a terminal.
///
/// A terminal acts on control characters: ESC and the C1 CSI (U+009B) start sequences that
/// clear the screen, move the cursor, retitle the window or write to the clipboard, BEL
/// rings, CR and BS overwrite what was printed. Unicode's bidirectional controls reorder
/// what follows them, so a line can read otherwise than its bytes say ("Trojan Source",
/// CVE-2021-42574). Every such scalar is shown as a visible escape instead, `\u{1b}`,
/// `\u{9b}`, `\u{202e}` (Swift's spelling, lowercase hex); everything else, other
/// languages and emoji included, is printed as it is.
package enum TerminalText {
    /// Whether a terminal would act on `scalar` rather than show it: the C0 controls
    /// (U+0000–U+001F), DEL (U+007F), the C1 controls (U+0080–U+009F) and Unicode's
    /// `Bidi_Control` characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `text` with every scalar ``isControl(_:)`` names written as `\u{X}`, except those in
    /// `keeping` (a renderer's own `"\n"` or `"\t"`, never text from elsewhere).
    package static func escaped(_ text: String, keeping: Set<Unicode.Scalar> = []) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && !keeping.contains($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) && !keeping.contains(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
