import Foundation

/// The two programs a package ships: the `clientctl` that is running and the
/// `clientctl-shell` beside it, both self-contained (the Swift runtime linked in, only
/// Debian's shared libraries needed), as `Scripts/build-release` makes them.
public struct ShippedBinaries: Sendable, Equatable {
    public let clientctl: String
    public let shell: String

    /// Shared libraries of the Swift toolchain: a binary that needs one runs only where the
    /// toolchain is installed.
    static let toolchainLibraries = [
        "libswift", "libFoundation", "lib_Foundation", "libdispatch.so", "libBlocksRuntime.so", "libXCTest.so", "libTesting.so",
    ]

    /// The binaries beside `executable` (default: this process's own file).
    /// - Throws: ``PackageError`` `.notFound` when one is missing, `.notSelfContained` when
    ///   one needs a library of the Swift toolchain (naming it and `Scripts/build-release`),
    ///   `.toolFailed` when `objdump` cannot read them.
    public static func beside(_ executable: String? = nil, scratch: String) throws -> ShippedBinaries {
        let own = executable ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = (own as NSString).deletingLastPathComponent
        let binaries = ShippedBinaries(clientctl: folder + "/clientctl", shell: folder + "/clientctl-shell")
        for path in [binaries.clientctl, binaries.shell] where access(path, X_OK) != 0 {
            throw PackageError(
                .notFound, "\(path) not found: package ships the clientctl-shell beside this clientctl; build both with Scripts/build-release")
        }
        for path in [binaries.clientctl, binaries.shell] {
            let needed = try neededLibraries(path, scratch: scratch)
            if let bad = needed.first(where: { name in toolchainLibraries.contains { name.hasPrefix($0) } }) {
                throw PackageError(
                    .notSelfContained,
                    "\(path) needs \(bad) from the Swift toolchain, which devices do not have: package self-contained binaries built by Scripts/build-release (--static-swift-stdlib) and run its clientctl"
                )
            }
        }
        return binaries
    }

    /// The `NEEDED` entries of an ELF file's dynamic section, as `objdump -p` prints them.
    static func neededLibraries(_ path: String, scratch: String) throws -> [String] {
        let output = try ToolRun(tool: "objdump", arguments: ["-p", path], timeout: 120).run(scratch: scratch)
        return output.standardOutput.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count == 2 && fields[0] == "NEEDED" ? String(fields[1]) : nil
        }
    }
}
