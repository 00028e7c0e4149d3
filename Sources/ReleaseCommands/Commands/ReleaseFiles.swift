import Foundation
import SignedManifest

/// Reading input files for the release-side commands, with the exit codes of docs/reference/exit-codes.md.
enum ReleaseFiles {
    /// Reads `path` (or stdin for `-`), refusing more than `limit` bytes.
    static func read(_ path: String, limit: Int) throws -> Data {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                throw CommandError(.notFound, "\(path) does not exist")
            }
            guard !isDir.boolValue, let h = FileHandle(forReadingAtPath: path) else {
                throw CommandError(.notFound, "cannot read \(path)")
            }
            handle = h
        }
        defer { if path != "-" { try? handle.close() } }
        let data = (try? handle.read(upToCount: limit + 1)) ?? Data()
        guard data.count <= limit else {
            throw CommandError(.tooLarge, "\(path) is larger than the \(limit)-byte limit")
        }
        return data
    }
}
