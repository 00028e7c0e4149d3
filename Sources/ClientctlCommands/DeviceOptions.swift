import ArgumentParser
import ClientEngine
import ClientFoundation
import ClientUpdater
import Foundation

/// `--root`, shared by every device command; defaults to `$CLIENTCTL_ROOT`.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Device root folder (default: $CLIENTCTL_ROOT).", valueName: "DIR"))
    var root: String?

    /// The root's layout, from `--root` or `CLIENTCTL_ROOT`.
    func layout() throws -> RootLayout {
        RootLayout(root: try DeviceEngine.rootPath(root))
    }
}

/// `--json`, for commands that report state.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON on stdout (shapes: docs/reference/json-output.md).")
    var json = false
}

/// Encodes a report as the stable `--json` shape: sorted keys, ISO 8601 dates.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    Console.out(data + Data("\n".utf8))
}
