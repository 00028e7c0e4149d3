import Foundation

/// The names in the folder `path`; none when the folder does not exist (a folder not made
/// yet is empty). Any other failure (not a folder, no permission) throws, so a test can
/// never read "empty" from a listing that failed.
public func directoryEntries(_ path: String) throws -> [String] {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [] }
    guard isFolder.boolValue else { throw HarnessError("\(path) is not a folder") }
    return try FileManager.default.contentsOfDirectory(atPath: path)
}
