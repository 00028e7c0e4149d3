import Foundation
import TestSupport
import Testing

/// The device program a package ships (`clientctl-device`: the device's `clientctl` and
/// `clientctl-shell`) holds the device side only: no release module and none of the
/// libraries only the release side uses. Judged on the built programs with binutils: `nm`
/// lists the symbols linked in (Swift mangles a module's name into each of its symbols as
/// `$s` + length + name) and `objdump -p` the shared libraries the program needs (the
/// `NEEDED` entries of its dynamic section, which become the package's `Depends:`).
@Suite struct DeviceLinkageTests {
    /// Release-side Swift modules, ours and the libraries' (GRDB and SQLite, PostgresNIO,
    /// swift-prometheus; ArchivePublishing holds the S3 client).
    static let releaseModules = [
        "ReleaseCommands", "FleetCollector", "FleetPage", "ArchivePublishing", "AppPackaging", "GRDB", "PostgresNIO", "Prometheus",
    ]
    /// Shared libraries only the release side needs.
    static let releaseLibraries = ["libsqlite3", "libpq"]

    static func symbolModules(_ program: String) async throws -> [String: Int] {
        let listing = try await Subprocess.run("nm", ["--defined-only", program], timeout: .seconds(300))
        try #require(listing.status == 0, "nm \(program): \(listing.errorOutput)")
        var counts: [String: Int] = [:]
        for line in listing.output.split(separator: "\n") {
            guard let symbol = line.split(separator: " ").last else { continue }
            for module in releaseModules where symbol.contains("$s\(module.utf8.count)\(module)") {
                counts[module, default: 0] += 1
            }
        }
        return counts
    }

    static func neededLibraries(_ program: String) async throws -> [String] {
        let dump = try await Subprocess.run("objdump", ["-p", program], timeout: .seconds(120))
        try #require(dump.status == 0, "objdump -p \(program): \(dump.errorOutput)")
        return dump.output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count == 2 && fields[0] == "NEEDED" ? String(fields[1]) : nil
        }
    }

    /// No symbol of a release module in the device program; the full `clientctl`, built from
    /// the same modules, has symbols of every one of them (the check can fail).
    @Test func theDeviceProgramLinksNoReleaseModule() async throws {
        let device = try await Self.symbolModules(ClientctlBinary.devicePath)
        #expect(device.isEmpty, "release modules linked into clientctl-device: \(device.sorted { $0.key < $1.key })")
        let full = try await Self.symbolModules(ClientctlBinary.path)
        for module in Self.releaseModules {
            #expect((full[module] ?? 0) > 0, "the full clientctl shows no symbol of \(module): the check could not see it")
        }
    }

    /// The device program needs no SQLite or PostgreSQL client library; the full `clientctl`
    /// needs SQLite (its collector's store).
    @Test func theDeviceProgramNeedsNoReleaseLibrary() async throws {
        let device = try await Self.neededLibraries(ClientctlBinary.devicePath)
        #expect(device.contains { $0.hasPrefix("libwebkit2gtk-4.1") }, "the device program holds the shell: \(device)")
        for library in Self.releaseLibraries {
            #expect(!device.contains { $0.hasPrefix(library) }, "clientctl-device needs \(library): \(device)")
        }
        let full = try await Self.neededLibraries(ClientctlBinary.path)
        #expect(full.contains { $0.hasPrefix("libsqlite3") }, "the full clientctl needs libsqlite3 (the check can fail): \(full)")
    }

    /// The device's `clientctl` lists the device commands only, and each release command the
    /// full `clientctl --help` lists is answered with a line saying where it is (exit 64).
    @Test func theDevicesClientctlHoldsTheDeviceCommandsAndNamesTheOthers() async throws {
        let full = try await ClientctlBinary.run(["--help"])
        #expect(full.status == 0)
        let release = Self.commands(in: full.output, group: "RELEASE SUBCOMMANDS:")
        let device = Self.commands(in: full.output, group: "DEVICE SUBCOMMANDS:")
        #expect(release.contains("collect") && release.contains("publish") && device.contains("serve"), "\(full.output)")

        let help = try await Subprocess.run(ClientctlBinary.devicePath, ["--help"])
        #expect(help.status == 0)
        #expect(Self.commands(in: help.output, group: "DEVICE SUBCOMMANDS:") == device, "\(help.output)")
        #expect(Self.commands(in: help.output, group: "RELEASE SUBCOMMANDS:").isEmpty, "\(help.output)")
        for command in release {
            let run = try await Subprocess.run(ClientctlBinary.devicePath, [command, "--help"])
            #expect(run.status == 64, "clientctl-device \(command): \(run.status)")
            #expect(
                run.errorOutput
                    == "clientctl: \(command) is a release command, not part of the device program: run it with the clientctl of a build machine\n",
                "\(run.errorOutput)")
        }
        let status = try await Subprocess.run(ClientctlBinary.devicePath, ["status", "--help"])
        #expect(status.status == 0 && status.output.contains("--root"), "\(status.errorOutput)")
    }

    /// The first word of each command line of a help section.
    static func commands(in help: String, group: String) -> [String] {
        var names: [String] = []
        var inside = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == group {
                inside = true
            } else if inside {
                if line.isEmpty { break }
                if line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first { names.append(String(name)) }
            }
        }
        return names
    }
}
