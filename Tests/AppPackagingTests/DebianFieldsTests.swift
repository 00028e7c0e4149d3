import AppPackaging
import ClientFoundation
import Foundation
import TestSupport
import Testing

/// Control fields as Debian takes them, and SemVer's order kept by dpkg's own comparison.
@Suite struct DebianFieldsTests {
    @Test(arguments: [
        ("1.2.3", "1.2.3"), ("1.0.0-beta.1", "1.0.0~beta.1"), ("1.0.0-rc.1+build.5", "1.0.0~rc.1+build.5"),
        ("2.0.0+20261124", "2.0.0+20261124"), ("0.0.1-0", "0.0.1~0"),
    ])
    func semverBecomesDebian(semver: String, debian: String) throws {
        #expect(try DebianFields.debianVersion(of: try #require(Version(semver))) == debian)
    }

    @Test(arguments: ["1.0.0-rc-1", "1.0.0-alpha.x-y", "1.0.0+build-7"])
    func aDashDebianCannotCarryIsRefused(semver: String) throws {
        let error = try #require(throws: PackageError.self) { try DebianFields.debianVersion(of: try #require(Version(semver))) }
        #expect(error.code == .invalidArgument && error.message.contains(semver), "\(error.message)")
    }

    /// SemVer 2.0's own precedence example (§11), in order: dpkg sorts the mapped versions
    /// the same way (`dpkg --compare-versions`, the tool that decides upgrades).
    @Test func dpkgOrdersTheMappedVersionsAsSemVerDoes() async throws {
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
            "1.0.0", "1.0.1", "1.1.0", "2.0.0",
        ]
        let mapped = try ordered.map { try DebianFields.debianVersion(of: try #require(Version($0))) }
        for (lower, higher) in zip(mapped, mapped.dropFirst()) {
            let compare = try await Subprocess.run("dpkg", ["--compare-versions", lower, "lt", higher])
            #expect(compare.status == 0, "dpkg: \(lower) < \(higher)")
        }
    }

    @Test func packageNamesAndMaintainersFollowPolicy() {
        for good in ["notes", "com.example-notes", "n2", "g++"] { #expect(throws: Never.self) { try DebianFields.checkPackageName(good) } }
        for bad in ["Notes", "n", "-notes", "notes_app", "notes app", "nötes", ""] {
            #expect(throws: PackageError.self, "\(bad)") { try DebianFields.checkPackageName(bad) }
        }
        for good in ["Example Ltd <apps@example.com>", "Ann O'Neil <ann@dev.example.org>"] {
            #expect(throws: Never.self) { try DebianFields.checkMaintainer(good) }
        }
        for bad in ["apps@example.com", "<apps@example.com>", "Ann <ann>", "Ann <ann@example.com", "A, B <ab@example.com>", "Ann\n <a@b.c>"] {
            #expect(throws: PackageError.self, "\(bad)") { try DebianFields.checkMaintainer(bad) }
        }
    }
}
