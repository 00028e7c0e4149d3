import Foundation
import TestSupport
import Testing

/// The release side links no Roughtime client: authenticated time's pure steps on bytes
/// (`AuthenticatedTime`: messages, verification, the quorum's decision, a time server's
/// address) are a format both sides read, and the UDP client that asks time servers
/// (`AuthenticatedTimeClient`, on NIO's `DatagramBootstrap`) is the device's alone.
///
/// Which artifact is judged, and why: no program of the package is release-only. The full
/// `clientctl` holds the device's commands too, so it links the client, rightly (the control
/// below), and `clientctl-device` is the device's (DeviceLinkageTests). A release-only
/// program would be linked from the object files of `ReleaseCommands` and of every module it
/// depends on through any chain (SwiftPM links every object of a product's target closure),
/// so those objects are judged: the closure as `Scripts/layers --closure` reads it from
/// Package.swift, and in each module's build folder the object of each of its current
/// sources (`Foo.swift.o`; a stale object of a file moved away is not linked, so not read).
/// `nm` lists each object's symbols, defined and referenced (undefined): none may be of the
/// client module (Swift mangles a module's name into its symbols as length + name,
/// `23AuthenticatedTimeClient`) or name `DatagramBootstrap`. NIOPosix itself is on the
/// release side (ClientFoundation's blocking executor runs on its thread pool); what must
/// not be is anything of ours that opens a UDP socket.
@Suite struct ReleaseLinkageTests {
    /// What the release side must not hold: the client module's symbols, NIO's UDP bootstrap.
    static let forbidden = ["23AuthenticatedTimeClient", "DatagramBootstrap"]

    /// The modules of ours `target` links, from Package.swift (system libraries left out).
    static func closure(_ target: String) async throws -> [String] {
        let run = try await Subprocess.run("python3", [ClientctlBinary.packagePath("Scripts/layers"), "--closure", target], timeout: .seconds(60))
        try #require(run.status == 0, "Scripts/layers --closure \(target): \(run.errorOutput)")
        return run.output.split(separator: "\n").map(String.init)
    }

    /// The object files of `module`'s current sources in the build folder the tests run from.
    static func objects(of module: String) throws -> [String] {
        let binDirectory = URL(fileURLWithPath: ClientctlBinary.devicePath).deletingLastPathComponent().path
        let sources = ClientctlBinary.packagePath("Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(atPath: sources)?.allObjects as? [String], "no folder \(sources)")
        let objects = files.filter { $0.hasSuffix(".swift") }.map { "\(binDirectory)/\(module).build/\(($0 as NSString).lastPathComponent).o" }
        try #require(!objects.isEmpty, "\(module) has no Swift sources in \(sources)")
        for object in objects { try #require(FileManager.default.fileExists(atPath: object), "not built: \(object)") }
        return objects
    }

    /// The symbols, defined or referenced, of `files` that contain one of ``forbidden``.
    static func forbiddenSymbols(_ files: [String]) async throws -> [String] {
        let listing = try await Subprocess.run("nm", files, timeout: .seconds(300))
        try #require(listing.status == 0, "nm: \(listing.errorOutput)")
        return listing.output.split(separator: "\n").compactMap { line in
            guard let symbol = line.split(separator: " ").last, Self.forbidden.contains(where: { symbol.contains($0) }) else { return nil }
            return String(symbol)
        }
    }

    /// The release commands' closure leaves the client out (the device's commands take it
    /// in, so the closure can show it) and keeps the pure module, which `DeviceSetup`
    /// validates a time server's address with.
    @Test func theReleaseSideDependsOnNoRoughtimeClient() async throws {
        let release = try await Self.closure("ReleaseCommands")
        #expect(!release.contains("AuthenticatedTimeClient"), "\(release)")
        #expect(release.contains("AuthenticatedTime") && release.contains("DeviceSetup") && release.contains("FleetCollector"), "\(release)")
        let device = try await Self.closure("DeviceCommands")
        #expect(device.contains("AuthenticatedTimeClient"), "\(device)")
    }

    /// No object of a module the release commands link defines or references a symbol of
    /// the client or NIO's UDP bootstrap; the client's own objects reference
    /// `DatagramBootstrap` and the full `clientctl` holds the client's symbols (the check can
    /// see what it looks for).
    @Test func noReleaseModuleObjectHoldsTheRoughtimeClient() async throws {
        var found: [String: [String]] = [:]
        for module in try await Self.closure("ReleaseCommands") {
            let symbols = try await Self.forbiddenSymbols(try Self.objects(of: module))
            if !symbols.isEmpty { found[module] = Array(symbols.prefix(3)) }
        }
        #expect(found.isEmpty, "release-side modules with symbols of the Roughtime client: \(found.sorted { $0.key < $1.key })")

        let client = try await Self.forbiddenSymbols(try Self.objects(of: "AuthenticatedTimeClient"))
        #expect(client.contains { $0.contains("DatagramBootstrap") }, "the client's objects show no DatagramBootstrap: the check is blind")
        let full = try await Self.forbiddenSymbols([ClientctlBinary.path])
        #expect(full.contains { $0.contains("$s23AuthenticatedTimeClient") }, "the full clientctl shows no symbol of the client: the check is blind")
    }
}
