import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import Testing

/// A root's `choosable` channels (docs/formats.md#trust-roots): what ``TrustRoot/parse(_:source:)``
/// accepts and refuses, what ``RootDraft/setChoosable(_:)`` writes, and the rule
/// ``TrustRoot/allowsChannel(_:)`` a device moves by.
@Suite struct ChoosableChannelsTests {
    let key: Ed25519.PrivateKey

    init() throws { key = try Ed25519.PrivateKey.generate() }

    func draft() -> RootDraft {
        RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400), rootKeys: [key.publicKey],
            rootThreshold: 1, releaseKeys: [key.publicKey], releaseThreshold: 1)
    }

    @Test func aRootListsTheChannelsItsDevicesMayChooseSortedAndSigned() throws {
        var d = draft()
        try d.sign(with: key)
        try d.setChoosable(["nightly", "beta", "beta"])
        #expect(d.signatures.isEmpty, "a change drops the signatures")
        try d.sign(with: key)
        let root = try d.root()
        #expect(root.choosable == ["beta", "nightly"] && root.channels == ["beta", "nightly", "stable"])
        #expect(root.allowsChannel("stable") && root.allowsChannel("beta") && !root.allowsChannel("canary"))
        #expect(root.object["choosable"] == .array([.string("beta"), .string("nightly")]))
        #expect(root.selfSigners == [key.publicKey.keyId], "the list is signed with the rest")
        #expect(RootDraft(root).choosable == ["beta", "nightly"] && RootDraft.successor(of: root, expires: Date()).choosable == ["beta", "nightly"])

        try d.setChoosable([])
        #expect(try d.root().object["choosable"] == nil && d.root().channels == ["stable"], "none: no field, the root's own channel only")
        #expect(TrustRoot.implicit(trusting: [key.publicKey], app: "com.example.notes", channel: "stable").channels == ["stable"])
    }

    @Test func aDraftRefusesTheRootsOwnChannelABadNameOrTooMany() {
        var d = draft()
        #expect(throws: ReleaseSigningError.self) { try d.setChoosable(["stable"]) }
        #expect(throws: ReleaseSigningError.self) { try d.setChoosable(["../beta"]) }
        #expect(throws: ReleaseSigningError.self) { try d.setChoosable((0...16).map { "c\($0)" }) }
        #expect(d.choosable.isEmpty, "a refused list changes nothing")
    }

    static let refused: [(JSONValue, String)] = [
        (.string("beta"), "field 'choosable' must be an array of channel names"),
        (.array([]), "field 'choosable' lists 0 channels: expected 1 to 16"),
        (.array([.integer(1)]), "field 'choosable' must be an array of channel names"),
        (.array([.string("stable")]), "field 'choosable' lists the root's own channel 'stable': list only the others"),
        (.array([.string("beta"), .string("beta")]), "field 'choosable' lists 'beta' twice"),
        (.array([.string("b/eta")]), "field 'choosable' entry 'b/eta': expected 1–64 ASCII letters"),
    ]

    @Test(arguments: refused.indices)
    func aMalformedChoosableListIsRefusedNamingTheField(index: Int) throws {
        let (value, expected) = Self.refused[index]
        var object = try draft().root().object
        object["choosable"] = value
        #expect {
            try TrustRoot.parse(JSONPrettyPrinter.render(.object(object)), source: "root/1.json")
        } throws: { error in
            (error as? SignedManifestError)?.code == .untrustedRoot && (error as? SignedManifestError)?.message.contains(expected) == true
        }
    }
}
