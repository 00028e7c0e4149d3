import ArgumentParser
import FleetPage
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--wide` and `-o wide|json`, what `fleet status` and `fleet devices` take besides `--json`,
/// and the width their table is laid out to (docs/fleet-reports.md#seeing-the-fleet).
struct FleetTableOptions: ParsableArguments {
    /// `-o`'s formats, spelled as kubectl's.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case wide, json
    }

    @Flag(name: .long, help: "Print every column, however wide the terminal (the default leaves out columns that do not fit).")
    var wide = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("wide: as --wide; json: as --json.", valueName: "format"))
    var output: Format?

    /// Whether the JSON is asked for, by `--json` (the command's flag) or `-o json`.
    func json(_ flag: Bool) -> Bool { flag || output == .json }

    /// Refuses asking for the table's width and the JSON at once.
    func validate(json flag: Bool) throws {
        if json(flag) && (wide || output == .wide) {
            throw ValidationError("--wide (-o wide) prints the table, --json (-o json) the JSON: give one")
        }
    }

    /// The layout of the table: every column with `--wide` or `-o wide`; else the width
    /// ``TerminalColumns/current()`` gives.
    func layout() -> TextLayout {
        wide || output == .wide ? .wide : .fit(columns: TerminalColumns.current())
    }
}

/// The width of the terminal the table is printed on, in columns.
enum TerminalColumns {
    /// `COLUMNS` when it is a positive number; else, when stdout is a terminal, the width the
    /// terminal says (`TIOCGWINSZ`); else ``TextLayout/defaultColumns`` (100).
    static func current(
        environment: [String: String] = ProcessInfo.processInfo.environment, terminal: () -> Int? = stdoutTerminalColumns
    ) -> Int {
        if let text = environment["COLUMNS"], let n = Int(text.trimmingCharacters(in: .whitespaces)), n > 0 { return n }
        return terminal() ?? TextLayout.defaultColumns
    }

    /// The width of the terminal stdout is, when it is one and says a width.
    static func stdoutTerminalColumns() -> Int? {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
