import AppPackaging
import Foundation
import StrictJSON

/// What `clientctl package` prints of a package it built.
extension PackageResult {
    /// The `--json` object.
    var jsonObject: JSONObject {
        [
            "path": .string(path), "bytes": .integer(bytes), "sha256": .string(sha256), "version": .string(debianVersion),
            "architecture": .string(architecture), "depends": .string(depends), "installedSizeKiB": .integer(installedSizeKiB),
            "unchanged": .bool(unchanged),
        ]
    }

    /// The line on stderr (stdout gets the path alone).
    var summary: String {
        let size = String(format: "%.1f MiB", Double(bytes) / 1_048_576)
        return unchanged
            ? "unchanged: \(path) holds these bytes already"
            : "wrote \(path) (\(size), installs \(installedSizeKiB) KiB; Depends: \(depends))"
    }
}
