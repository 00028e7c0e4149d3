import Foundation

/// How wide the text of `fleet status` and `fleet devices` may be.
package enum TextLayout: Sendable, Equatable {
    /// Every column, whatever the width: `--wide` (nothing wrapped, no note).
    case wide
    /// At most this many columns a line: the lowest-priority columns are left out until the
    /// table fits, and one line says which; longer prose lines wrap. Narrower than
    /// ``TextLayout/minimumColumns`` counts as that.
    case fit(columns: Int)

    /// The width used when neither `COLUMNS` nor the terminal says one: 100.
    package static let defaultColumns = 100
    /// The narrowest width laid out for: 40.
    package static let minimumColumns = 40
}

/// A table of text in columns, each with a priority: laid out to a width, it keeps the
/// columns of the highest priorities that fit together and leaves the others out, whole
/// (a column is chosen, never cut), in the table's own order. Pure.
package struct TextTable: Sendable {
    /// One column.
    package struct Column: Sendable {
        /// Its header (upper case, as printed).
        package var header: String
        /// Numbers are aligned right.
        package var right: Bool
        /// 1 is the most important; the highest number is the first left out.
        package var priority: Int

        /// A column.
        package init(_ header: String, right: Bool = true, priority: Int) {
            self.header = header
            self.right = right
            self.priority = priority
        }
    }

    /// The columns, in the order printed.
    package var columns: [Column]
    /// The rows: one cell per column, already escaped for a terminal.
    package var rows: [[String]]

    /// A table.
    package init(columns: [Column], rows: [[String]]) {
        self.columns = columns
        self.rows = rows
    }

    /// The laid-out table: its lines (header first, each ending with a newline) and the
    /// headers of the columns left out, highest priority first.
    package struct Layout: Sendable, Equatable {
        package var text: String
        package var leftOut: [String]
    }

    /// The indices of the columns kept for `layout`, in the table's order: every column when
    /// wide; else those of the highest priorities whose widths, two spaces apart, fit, stopping
    /// at the first that does not (the two highest priorities are always kept).
    package func kept(_ layout: TextLayout) -> [Int] {
        guard case .fit(let columns) = layout else { return Array(self.columns.indices) }
        let width = max(columns, TextLayout.minimumColumns)
        let widths = self.widths
        var kept: [Int] = []
        var used = 0
        for index in self.columns.indices.sorted(by: { self.columns[$0].priority < self.columns[$1].priority }) {
            let need = used + (kept.isEmpty ? 0 : 2) + widths[index]
            if need > width && kept.count >= 2 { break }
            kept.append(index)
            used = need
        }
        return kept.sorted()
    }

    /// The table laid out for `layout`. When even the two most important columns are wider
    /// than the width, the first column's longest cells are cut in the middle (`…`) so the
    /// line fits.
    package func render(_ layout: TextLayout) -> Layout {
        let kept = kept(layout)
        var widths = self.widths
        if case .fit(let columns) = layout, let first = kept.first {
            let width = max(columns, TextLayout.minimumColumns)
            let others = kept.dropFirst().reduce(0) { $0 + widths[$1] + 2 }
            widths[first] = max(min(widths[first], width - others), 1)
        }
        let lines = ([columns.map(\.header)] + rows).map { row in
            kept.map { i -> String in
                let cell = TextWidth.fitted(i < row.count ? row[i] : "", to: widths[i])
                let pad = String(repeating: " ", count: max(0, widths[i] - TextWidth.of(cell)))
                return columns[i].right ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }
        let leftOut = columns.indices.filter { !kept.contains($0) }.sorted { columns[$0].priority < columns[$1].priority }
        return Layout(text: lines.joined(), leftOut: leftOut.map { columns[$0].header })
    }

    /// The one line that says which columns `render` left out, at most `columns` wide
    /// (`(3 columns left out for 80 columns: STAGED, DEFERRED, FROM MIRRORS; --wide shows
    /// all)`): the names of the highest priorities first, and `and N more` when not all fit
    /// (only the count when not even one does). Nil when none was left out.
    package static func note(leftOut: [String], columns: Int) -> String? {
        guard !leftOut.isEmpty else { return nil }
        let width = max(columns, TextLayout.minimumColumns)
        let n = leftOut.count
        let count = "(\(n) column\(n == 1 ? "" : "s") left out"
        let tail = "; --wide shows all)"
        for shown in stride(from: n, through: 1, by: -1) {
            let names = leftOut.prefix(shown).joined(separator: ", ") + (shown < n ? ", and \(n - shown) more" : "")
            let line = count + " for \(width) columns: " + names + tail
            if TextWidth.of(line) <= width { return line }
        }
        return count + tail
    }

    private var widths: [Int] {
        columns.indices.map { i in ([columns[i].header] + rows.map { i < $0.count ? $0[i] : "" }).map(TextWidth.of).max() ?? 0 }
    }
}

/// The width of text on a terminal, and prose laid out to one.
package enum TextWidth {
    /// The columns `text` takes on a terminal: one per character, two for the wide ones (East
    /// Asian wide and full-width forms, most emoji).
    package static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xAC00...0xD7A3,
            0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// `text` cut in the middle with `…` to at most `width` columns (as it is when it fits).
    package static func fitted(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 1 else { return "…" }
        let characters = Array(text)
        let keep = width - 1
        var front = ""
        var back = ""
        var frontWidth = 0
        var backWidth = 0
        var i = 0
        var j = characters.count - 1
        while i <= j {
            if frontWidth <= backWidth {
                let w = of(characters[i])
                if frontWidth + backWidth + w > keep { break }
                front.append(characters[i])
                frontWidth += w
                i += 1
            } else {
                let w = of(characters[j])
                if frontWidth + backWidth + w > keep { break }
                back = String(characters[j]) + back
                backWidth += w
                j -= 1
            }
        }
        return front + "…" + back
    }

    /// `line` (no newline in it) as lines of at most `width` columns, broken at spaces,
    /// the lines after the first indented by `indent` spaces; a word longer than a line is
    /// broken where the line ends. Each line ends with a newline. `.wide`: the line as it is.
    package static func wrap(_ line: String, _ layout: TextLayout, indent: Int = 4) -> String {
        let lead = line.prefix(while: { $0 == " " })
        let words = line.dropFirst(lead.count).split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        return wrap(words: words, lead: String(lead), layout, indent: indent)
    }

    /// `words` joined by spaces after `lead`, as ``wrap(_:_:indent:)`` lays out a line, but
    /// broken only between the words given (a word may hold spaces: `12 devices,`).
    package static func wrap(words: [String], lead: String = "", _ layout: TextLayout, indent: Int = 4) -> String {
        let line = lead + words.joined(separator: " ")
        guard case .fit(let columns) = layout else { return line + "\n" }
        let width = max(columns, TextLayout.minimumColumns)
        guard of(line) > width else { return line + "\n" }
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var current = lead
        var currentWidth = of(lead)
        var start = true
        for whole in words {
            var word = Substring(whole)
            let need = currentWidth + (start ? 0 : 1) + of(whole)
            if need <= width {
                current += (start ? "" : " ") + word
                currentWidth = need
                start = false
                continue
            }
            if !start {
                lines.append(current)
                current = margin
                currentWidth = indent
            }
            // A word too long for a whole line: break it where each line ends.
            while currentWidth + of(String(word)) > width {
                var piece = ""
                var pieceWidth = 0
                for c in word {
                    if currentWidth + pieceWidth + of(c) > width { break }
                    piece.append(c)
                    pieceWidth += of(c)
                }
                if piece.isEmpty, let c = word.first { piece = String(c) }
                lines.append(current + piece)
                word = word.dropFirst(piece.count)
                current = margin
                currentWidth = indent
            }
            current += word
            currentWidth += of(String(word))
            start = false
        }
        lines.append(current)
        return lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n" }.joined()
    }
}
