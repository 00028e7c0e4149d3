import ClientFoundation
import Foundation

// The reprepro runner: its `conf/distributions` and its calls.
extension AptRepository {
    /// `conf/distributions`: one distribution per suite (codename = suite), component
    /// `main`, indexes plain, gzip and xz, `Valid-Until` ``State/validForDays`` ahead.
    static func distributions(_ state: State) -> String {
        state.suites.map { suite in
            """
            Codename: \(suite)
            Suite: \(suite)
            Origin: \(state.origin)
            Label: \(state.origin)
            Architectures: \(architectures.joined(separator: " "))
            Components: main
            Description: \(state.origin) packaged apps, \(suite) channel (clientctl repo)
            DebIndices: Packages Release . .gz .xz
            DebOverride: override.\(suite)
            ValidFor: \(state.validForDays)d

            """
        }.joined(separator: "\n")
    }

    static func reprepro(_ base: String, _ arguments: [String]) throws -> ToolRun.Output {
        try ToolRun(tool: "reprepro", arguments: ["--basedir", base, "--silent"] + arguments, timeout: timeout).run(scratch: base)
    }

    static func list(repo: String, state: State) throws -> [Entry] {
        var entries: [Entry] = []
        for suite in state.suites {
            let output = try reprepro(repo, ["--list-format", "${package}\\t${version}\\t${architecture}\\t${$filekey}\\n", "list", suite])
            for line in output.standardOutput.split(separator: "\n") {
                let fields = line.split(separator: "\t").map(String.init)
                guard fields.count == 4 else { continue }
                entries.append(
                    Entry(
                        suite: suite, package: fields[0], version: fields[1], architecture: fields[2], file: fields[3],
                        phase: state.phases?[suite]?[fields[0]]))
            }
        }
        return entries
    }
}
