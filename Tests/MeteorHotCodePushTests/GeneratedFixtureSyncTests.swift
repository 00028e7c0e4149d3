import Foundation
import TestSupport
import Testing

/// The committed `Fixtures/meteor/` must be exactly what the generator writes (README.md
/// files, written by hand, aside).
/// Regenerate with `CLIENTCTL_REGENERATE_FIXTURES=1 swift test --filter GeneratedFixtureSyncTests`.
@Suite struct GeneratedFixtureSyncTests {
    @Test func committedFixturesMatchTheGenerator() throws {
        if ProcessInfo.processInfo.environment["CLIENTCTL_REGENERATE_FIXTURES"] == "1" {
            let root = GeneratedMeteorFixtures.root
            let readmes = (FileManager.default.subpaths(atPath: root) ?? []).filter { ($0 as NSString).lastPathComponent == "README.md" }
                .compactMap { path in FileManager.default.contents(atPath: root + "/" + path).map { (path, $0) } }
            try? FileManager.default.removeItem(atPath: root)
            try GeneratedMeteorFixtures.write(to: root)
            for (path, data) in readmes { try data.write(to: URL(fileURLWithPath: root + "/" + path)) }
        }
        let temp = try TemporaryDirectory("meteor-fixtures")
        try GeneratedMeteorFixtures.write(to: temp.path)
        let expected = try tree(temp.path)
        let committed = try tree(GeneratedMeteorFixtures.root)
        #expect(expected.keys.sorted() == committed.keys.sorted())
        for (path, data) in expected where committed[path] != data {
            Issue.record("Fixtures/meteor/\(path) differs from the generator output")
        }
    }

    func tree(_ root: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var isDir: ObjCBool = false
            if (relative as NSString).lastPathComponent == "README.md" { continue }
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDir), !isDir.boolValue {
                result[relative] = FileManager.default.contents(atPath: root + "/" + relative)
            }
        }
        return result
    }
}
