import ArgumentParser
import ClientFoundation
import Foundation

/// Runs a command body, turning any clientctl error into one line on stderr and the
/// error's sysexits status. Commands call this from `run()` so they stay thin.
package func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as any ClientctlError {
        Console.err("clientctl: \(FlagNames.message(for: error))\n")
        throw ExitCode(error.kind.exitCode)
    }
}

/// Writes a line to stderr (messages), keeping stdout for data and `--json`.
package func printError(_ line: String) {
    Console.err(line + "\n")
}
