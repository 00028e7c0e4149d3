import Foundation

/// Builds source folders for archive and publish tests.
public enum SourceFolders {
    /// The sample client plus what stresses an archiver: an empty folder, an executable,
    /// a non-ASCII name, a long nested path, an empty file.
    public static func rich(at path: String) throws {
        let fm = FileManager.default
        try fm.copyItem(atPath: TestPaths.sampleClient, toPath: path)
        try fm.createDirectory(atPath: path + "/empty", withIntermediateDirectories: true)
        let deep = path + "/a/very/deep/" + String(repeating: "long-folder-name-", count: 6) + "end"
        try fm.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try Data("deep\n".utf8).write(to: URL(fileURLWithPath: deep + "/" + String(repeating: "f", count: 120) + ".txt"))
        try Data("#!/bin/sh\necho hi\n".utf8).write(to: URL(fileURLWithPath: path + "/tool.sh"))
        chmod(path + "/tool.sh", 0o755)
        try Data("crème brûlée 🍮\n".utf8).write(to: URL(fileURLWithPath: path + "/assets/crème-brûlée-🍮.txt"))
        try Data().write(to: URL(fileURLWithPath: path + "/empty.txt"))
    }
}

public enum TestPaths {
    /// Fixtures/sample-client in the package.
    public static var sampleClient: String { ClientctlBinary.packagePath("Fixtures/sample-client") }
}
