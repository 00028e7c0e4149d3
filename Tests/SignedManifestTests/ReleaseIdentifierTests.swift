import Foundation
import SignedManifest
import TestSupport
import Testing

/// The one table for app ids and channel names (``ReleaseIdentifier``): what `init`,
/// `publish` and the manifest verifier all accept.
@Suite struct ReleaseIdentifierTests {
    static let table: [(kind: ReleaseIdentifier, value: String, valid: Bool)] = [
        (.app, "com.example.notes", true),
        (.app, "a", true),
        (.app, "A-b_c.9", true),
        (.app, String(repeating: "a", count: 255), true),
        (.app, String(repeating: "a", count: 256), false),
        (.app, "", false),
        (.app, "-app", false),
        (.app, "com/example", false),
        (.app, "com example", false),
        (.app, "caf\u{E9}", false),
        (.channel, "stable", true),
        (.channel, "beta-2", true),
        (.channel, String(repeating: "c", count: 64), true),
        (.channel, String(repeating: "c", count: 65), false),
        (.channel, ".hidden", false),
        (.channel, "_x", false),
        (.channel, "..", false),
        (.channel, "a\u{0}b", false),
    ]

    @Test(arguments: table.indices)
    func identifiers(_ i: Int) {
        let row = Self.table[i]
        #expect((row.kind.problem(row.value) == nil) == row.valid, "\(row.kind) \(row.value.debugDescription)")
    }
}
