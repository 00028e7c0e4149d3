import Foundation

/// The program a package ships: `clientctl-device` beside the `clientctl` that is running
/// (or the one `--device-program` names), the device's `clientctl` and `clientctl-shell` in one file (by the name it is called), self-contained
/// (the Swift runtime linked in, only Debian's shared libraries needed), as
/// `Scripts/build-release` makes it.
package struct ShippedBinaries: Sendable, Equatable {
    /// The multi-call program.
    package let device: String

    package init(device: String) { self.device = device }

    /// Shared libraries of the Swift toolchain: a binary that needs one runs only where the
    /// toolchain is installed.
    static let toolchainLibraries = [
        "libswift", "libFoundation", "lib_Foundation", "libdispatch.so", "libBlocksRuntime.so", "libXCTest.so", "libTesting.so",
    ]

    /// The binaries beside `executable` (default: this process's own file).
    /// - Throws: as ``checked(_:scratch:)``.
    package static func beside(_ executable: String? = nil, scratch: String) throws -> ShippedBinaries {
        let own = executable ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = (own as NSString).deletingLastPathComponent
        return try checked(folder + "/clientctl-device", scratch: scratch, named: "beside this clientctl")
    }

    /// The device program at `path` (`package --device-program`), checked as ``beside(_:scratch:)``
    /// checks the one beside this clientctl.
    /// - Throws: ``PackageError`` `.notFound` when it is missing or not executable,
    ///   `.notSelfContained` when it needs a library of the Swift toolchain (naming it and
    ///   `Scripts/build-release`), `.toolFailed` when `objdump` cannot read it.
    package static func checked(_ path: String, scratch: String, named place: String = "by --device-program") throws -> ShippedBinaries {
        let binaries = ShippedBinaries(device: path)
        guard access(binaries.device, X_OK) == 0 else {
            throw PackageError(
                .notFound,
                "\(binaries.device) not found: package ships the clientctl-device \(place); build it with Scripts/build-release")
        }
        let needed = try neededLibraries(binaries.device, scratch: scratch)
        if let bad = needed.first(where: { name in toolchainLibraries.contains { name.hasPrefix($0) } }) {
            throw PackageError(
                .notSelfContained,
                "\(binaries.device) needs \(bad) from the Swift toolchain, which devices do not have: package self-contained binaries built by Scripts/build-release (--static-swift-stdlib)"
            )
        }
        return binaries
    }

    /// The `NEEDED` entries of an ELF file's dynamic section, as `objdump -p` prints them.
    static func neededLibraries(_ path: String, scratch: String) throws -> [String] {
        let output = try ToolRun(tool: "objdump", arguments: ["-p", path], timeout: .seconds(120)).run(scratch: scratch)
        return output.standardOutput.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count == 2 && fields[0] == "NEEDED" ? String(fields[1]) : nil
        }
    }
}
