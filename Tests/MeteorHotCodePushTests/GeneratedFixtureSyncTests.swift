import Foundation
import TestSupport
import Testing

/// The committed `Fixtures/meteor/` must be exactly what the generator writes.
/// Regenerate with `CLIENTCTL_REGENERATE_FIXTURES=1 swift test --filter GeneratedFixtureSyncTests`.
@Suite struct GeneratedFixtureSyncTests {
    @Test func committedFixturesMatchTheGenerator() throws {
        if ProcessInfo.processInfo.environment["CLIENTCTL_REGENERATE_FIXTURES"] == "1" {
            try? FileManager.default.removeItem(atPath: GeneratedMeteorFixtures.root)
            try GeneratedMeteorFixtures.write(to: GeneratedMeteorFixtures.root)
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
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDir), !isDir.boolValue {
                result[relative] = FileManager.default.contents(atPath: root + "/" + relative)
            }
        }
        return result
    }
}
