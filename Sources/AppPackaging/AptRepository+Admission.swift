import ClientFoundation
import DeviceSetup
import Foundation

// What is let in: suites, settings, phases, and a .deb judged before reprepro sees it.
extension AptRepository {
    /// A suite is a channel's name: `[a-z0-9][a-z0-9.+-]*`, at most 64 characters.
    static func checkSuite(_ suite: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.+-")
        guard let first = suite.first, first.isLetter || first.isNumber, suite.count <= 64, suite.allSatisfy({ allowed.contains($0) }) else {
            throw PackageError(.invalidArgument, "--suite '\(suite)' is not a suite name ([a-z0-9][a-z0-9.+-]*, e.g. stable or beta)")
        }
    }

    static func check(_ settings: Settings) throws {
        if let days = settings.validForDays, !(1...3650).contains(days) {
            throw PackageError(.invalidArgument, "--valid-for must be 1 to 3650 days, not \(days)")
        }
        if let origin = settings.origin {
            try DebianFields.checkLine(origin, flag: "--origin")
        }
    }

    /// A phase is a percentage: 0 (nobody yet) to 100 (every machine).
    static func checkPhase(_ percent: Int) throws {
        guard (0...100).contains(percent) else { throw PackageError(.invalidArgument, "a phase is 0 to 100 percent, not \(percent)") }
    }

    /// The .deb's control fields; refused unless `clientctl package` made it.
    static func inspect(_ path: String) throws -> Deb {
        var st = stat()
        guard stat(path, &st) == 0 else { throw PackageError(.notFound, "\(path): no such file") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw PackageError(.foreignPackage, "\(path) is not a regular file") }
        let output: String
        do {
            output = try ToolRun(
                tool: "dpkg-deb", arguments: ["--field", path, "Package", "Version", "Architecture", PackageTexts.templateField],
                timeout: .seconds(120)
            ).run(scratch: NSTemporaryDirectory()).standardOutput
        } catch let error as PackageError where error.code == .toolFailed && ToolRun.find("dpkg-deb") != nil {
            throw PackageError(.foreignPackage, "\(path) is not a Debian package (\(error.message))")
        }
        var fields: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let package = fields["Package"], let version = fields["Version"], let architecture = fields["Architecture"] else {
            throw PackageError(.foreignPackage, "\(path) is not a Debian package (no Package, Version or Architecture)")
        }
        guard fields[PackageTexts.templateField] == "/usr/share/\(package)/\(DeviceTemplate.fileName)" else {
            throw PackageError(
                .foreignPackage, "\(path) was not made by clientctl package (no \(PackageTexts.templateField) field): repo carries packaged apps only"
            )
        }
        return Deb(path: path, package: package, version: version, architecture: architecture, sha256: try Digest.hex(.sha256, ofFileAt: path))
    }

    /// What adding `deb` to `suite` does: unchanged (the same bytes), refused (other bytes
    /// for a version the pool holds, or an older version than the suite's), or added.
    static func decide(_ deb: Deb, suite: String, entries: [Entry], repo: String) throws -> Added {
        var added = Added(package: deb.package, version: deb.version, architecture: deb.architecture, replaced: nil, unchanged: false)
        for entry in entries where entry.package == deb.package && entry.architecture == deb.architecture && entry.version == deb.version {
            let held = try? Digest.hex(.sha256, ofFileAt: repo + "/" + entry.file)
            guard held == deb.sha256 else {
                throw PackageError(
                    .versionConflict,
                    "\(deb.package) \(deb.version) (\(deb.architecture)) is in suite \(entry.suite) with other bytes: a version is published once (raise --version)"
                )
            }
            if entry.suite == suite { added.unchanged = true }
        }
        if let current = entries.first(where: { $0.suite == suite && $0.package == deb.package && $0.architecture == deb.architecture }),
            current.version != deb.version
        {
            guard try compareVersions(current.version, "lt", deb.version) else {
                throw PackageError(
                    .versionConflict,
                    "suite \(suite) holds \(deb.package) \(current.version), newer than \(deb.version): apt would not install it (remove it first)")
            }
            added.replaced = current.version
        }
        return added
    }

    static func compareVersions(_ a: String, _ op: String, _ b: String) throws -> Bool {
        do {
            _ = try ToolRun(tool: "dpkg", arguments: ["--compare-versions", a, op, b], timeout: .seconds(60)).run(scratch: NSTemporaryDirectory())
            return true
        } catch let error as PackageError where error.message.contains("exit status 1") {
            return false
        }
    }
}
