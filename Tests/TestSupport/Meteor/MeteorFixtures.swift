import Foundation

/// Where the Meteor fixtures are: our generated ones (`<package root>/Fixtures/meteor`) and,
/// only when `CLIENTCTL_METEOR_REFERENCE` names it, the original plugin's reference set
/// (`Scripts/meteor-reference-replay <path>` sets it). `swift test` alone never reads a
/// folder outside the repository, so a fresh clone runs every test.
public enum MeteorFixtures {
    /// The environment variable naming the reference fixtures' folder.
    public static let referenceVariable = "CLIENTCTL_METEOR_REFERENCE"

    /// The package root, derived from this file's location.
    public static var packageRoot: String { ClientctlBinary.packageRoot }

    /// True when `CLIENTCTL_METEOR_REFERENCE` is set: the reference cases are then part of
    /// the run, and required (a wrong path fails them, it never skips them).
    public static var referenceRequested: Bool {
        !(ProcessInfo.processInfo.environment[referenceVariable] ?? "").isEmpty
    }

    /// The reference fixtures' folder named by `CLIENTCTL_METEOR_REFERENCE`.
    /// - Throws: ``HarnessError`` when the variable is unset or the folder lacks
    ///   `bundled_www/application/program.json`.
    public static func reference() throws -> String {
        guard let path = ProcessInfo.processInfo.environment[referenceVariable], !path.isEmpty else {
            throw HarnessError("\(referenceVariable) is not set: run Scripts/meteor-reference-replay <fixtures path>")
        }
        let folder = URL(fileURLWithPath: path).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: folder + "/bundled_www/application/program.json") else {
            throw HarnessError("\(referenceVariable)=\(path): no bundled_www/application/program.json there (not the Meteor reference fixtures)")
        }
        return folder
    }

    /// `<package root>/Fixtures/meteor`: fixtures generated for this repository.
    public static var generated: String { packageRoot + "/Fixtures/meteor" }
}
