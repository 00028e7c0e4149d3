import Foundation
import Synchronization

/// The tests' default package (`PackageInputs.arguments()`: version 1.0.0, the tests' gzip),
/// built once and shared by every test that only reads it (its units, its rules, its tree).
///
/// `package` is reproducible (PackageCommandTests proves the same inputs give the same
/// bytes from any folder), so one build serves them all. The copy lives under
/// `.build/test-packages/`, named by the device program's size and change time: a rebuilt
/// device program gets a new package, and test processes running side by side build it
/// at most once each, the first rename into place winning.
public enum SharedPackage {
    /// The `.deb` of the default inputs, built on first use.
    public static func defaultDeb() async throws -> String {
        let task = building.withLock { task in
            if let task { return task }
            let made = Task { try await build() }
            task = made
            return made
        }
        return try await task.value
    }

    private static let building = Mutex<Task<String, any Error>?>(nil)

    private static func build() async throws -> String {
        let device = try ReleaseBinaries.device()
        let info = try FileManager.default.attributesOfItem(atPath: device)
        let size = (info[.size] as? NSNumber)?.int64Value ?? 0
        let changed = Int64(((info[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0) * 1000)
        let folder = ClientctlBinary.packagePath(".build/test-packages/default-\(size)-\(changed)")
        let deb = folder + "/" + PackageInputs.debName("1.0.0")
        if FileManager.default.fileExists(atPath: deb) { return deb }

        let inputs = try PackageInputs("package-shared")
        let built = try await ReleaseBinaries.package(inputs.arguments())
        guard built.status == 0 else { throw HarnessError("the shared test package failed to build: \(built.errorOutput)") }
        try FileManager.default.createDirectory(
            atPath: (folder as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // A folder another process renamed first holds the same bytes.
        if rename(inputs.tmp("dist"), folder) != 0, !FileManager.default.fileExists(atPath: deb) {
            throw HarnessError("cannot keep the shared test package at \(folder): errno \(errno)")
        }
        return deb
    }
}
