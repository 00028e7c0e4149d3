import ArgumentParser
import ClientFoundation
import Foundation

/// `--json`, for commands that report state.
package struct OutputOptions: ParsableArguments {
    package init() {}

    @Flag(name: .long, help: "Print machine-readable JSON on stdout (shapes: docs/reference/json-output.md).")
    package var json = false
}

/// Encodes a report as the stable `--json` shape: sorted keys, ISO 8601 dates.
package func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    Console.out(data + Data("\n".utf8))
}
