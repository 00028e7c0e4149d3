import Foundation

/// Where the Meteor fixtures are: the reference set from the original plugin (outside the
/// repository, at `<package root>/../shared/fixtures/meteor`) and our generated ones
/// (`<package root>/Fixtures/meteor`).
public enum MeteorFixtures {
    /// The package root, derived from this file's location.
    public static var packageRoot: String {
        let file = URL(fileURLWithPath: #filePath)
        return file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// `<package root>/../shared/fixtures/meteor`, or `nil` when that folder is absent.
    public static var reference: String? {
        let path = URL(fileURLWithPath: packageRoot).deletingLastPathComponent()
            .appendingPathComponent("shared/fixtures/meteor").standardizedFileURL.path
        return FileManager.default.fileExists(atPath: path + "/bundled_www/application/program.json") ? path : nil
    }

    /// True when the reference fixtures are available.
    public static var referenceAvailable: Bool { reference != nil }

    /// `<package root>/Fixtures/meteor`: fixtures generated for this repository.
    public static var generated: String { packageRoot + "/Fixtures/meteor" }
}
