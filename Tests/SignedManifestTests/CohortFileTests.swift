import ClientFoundation
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The cohort file format and the manifest's `cohorts` field (docs/formats.md#cohort-files).
@Suite struct CohortFileTests {
    static let a = String(repeating: "0a", count: 16)
    static let b = String(repeating: "1b", count: 16)
    static let c = String(repeating: "fc", count: 16)

    @Test func theCanonicalFileIsSortedOnceEachWithoutCommentsOrBlankLines() throws {
        let bytes = try CohortFile.canonical(text: "# pilot\n\(Self.c)\r\n\n  \(Self.a)  \n\(Self.c)\n\(Self.b)", source: "ids.txt")
        #expect(String(decoding: bytes, as: UTF8.self) == "\(Self.a)\n\(Self.b)\n\(Self.c)\n")
        let cohort = CohortReference(name: "pilot", file: bytes)
        #expect(cohort.count == 3 && cohort.path == "cohorts/pilot/\(cohort.digest).txt")
        #expect(CohortFile.problem(bytes, reference: cohort) == nil)
        #expect(try CohortFile.canonical(text: "", source: "empty").isEmpty)
    }

    @Test(arguments: [
        (
            "\(String(repeating: "0a", count: 16))\nABCDEF0123456789abcdef0123456789\n",
            "ids.txt line 2: 'ABCDEF0123456789abcdef0123456789' is not a device id (32 lowercase hex digits)"
        ),
        ("0a0a", "ids.txt line 1: '0a0a' is not a device id (32 lowercase hex digits)"),
        (
            "\(String(repeating: "0", count: 33))",
            "ids.txt line 1: '\(String(repeating: "0", count: 33))' is not a device id (32 lowercase hex digits)"
        ),
    ])
    func aLineThatIsNotAnIdIsRefusedWithItsNumber(text: String, message: String) {
        #expect(throws: SignedManifestError.self) { try CohortFile.canonical(text: text, source: "ids.txt") }
        do {
            _ = try CohortFile.canonical(text: text, source: "ids.txt")
        } catch let error as SignedManifestError {
            #expect(error.message == message)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aListOfMoreThan100000IdsIsRefused() {
        let ids = (0...CohortFile.maxIds).map { String(format: "%032x", $0) }.joined(separator: "\n")
        #expect(throws: SignedManifestError.self) { try CohortFile.canonical(text: ids, source: "big") }
    }

    /// What a device refuses: another size, another digest, a file out of order or not of ids.
    @Test func aFileOtherThanTheOneNamedIsRefusedSayingWhy() throws {
        let bytes = try CohortFile.canonical(text: "\(Self.a)\n\(Self.b)", source: "ids")
        let cohort = CohortReference(name: "pilot", file: bytes)
        #expect(CohortFile.problem(bytes + Array("\(Self.c)\n".utf8), reference: cohort)?.hasPrefix("has 99 bytes, not the 66") == true)
        var flipped = bytes
        flipped[0] = UInt8(ascii: "1")
        #expect(CohortFile.problem(flipped, reference: cohort)?.hasPrefix("does not match the SHA-256") == true)
        let unsorted = Array("\(Self.b)\n\(Self.a)\n".utf8)
        #expect(
            CohortFile.problem(unsorted, reference: CohortReference(name: "p", file: unsorted))
                == "line 2 is not above the line before it (ids must be sorted, each once)")
        let twice = Array("\(Self.a)\n\(Self.a)\n".utf8)
        #expect(CohortFile.problem(twice, reference: CohortReference(name: "p", file: twice))?.hasPrefix("line 2 is not above") == true)
        let upper = Array("\(Self.a.uppercased())\n".utf8)
        #expect(CohortFile.problem(upper, reference: CohortReference(name: "p", file: upper)) == "line 1 is not a device id")
        let crlf = Array("\(Self.a.dropLast())\r\n".utf8)
        #expect(CohortFile.problem(crlf, reference: CohortReference(name: "p", file: crlf)) == "line 1 is not a device id")
    }

    @Test func membershipIsABinarySearchOverTheLines() throws {
        let ids = (0..<1000).map { String(format: "%032x", $0 * 7) }
        let bytes = try CohortFile.canonical(text: ids.shuffled().joined(separator: "\n"), source: "ids")
        for id in ids { #expect(CohortFile.contains(bytes, id: id)) }
        for n in [1, 6, 8, 6994, 7000, 100_000] { #expect(!CohortFile.contains(bytes, id: String(format: "%032x", n))) }
        #expect(!CohortFile.contains(bytes, id: "short") && !CohortFile.contains([], id: ids[0]))
    }

    /// The sample manifest for `ring = beta and id in cohort pilot`, changed and signed
    /// (signing validates as a device does); the error's text when it is refused.
    static func signed(_ change: (inout JSONObject) -> Void) throws -> Result<Manifest, ReleaseSigningError> {
        var draft = ManifestSamples.draft(version: "1.2.3")
        draft.target = try TargetExpression(parsing: "ring = beta and id in cohort pilot")
        draft.cohorts = [CohortReference(name: "pilot", digest: String(repeating: "ab", count: 32), count: 2)]
        var o = draft.unsignedObject(keyId: "")
        o.removeValue(forKey: "keyId")
        change(&o)
        let key = try Ed25519.PrivateKey.generate()
        do {
            return .success(try Manifest.sign(o, by: [key]))
        } catch let error as ReleaseSigningError {
            return .failure(error)
        }
    }

    @Test func aManifestNamesEveryCohortItsTargetsAskAbout() throws {
        let ok = try Self.signed { _ in }.get()
        #expect(ok.cohort(named: "pilot")?.count == 2 && ok.cohort(named: "other") == nil)
        guard case .failure(let missing) = try Self.signed({ $0.removeValue(forKey: "cohorts") }) else {
            Issue.record("a target asking about a cohort the manifest does not name was accepted")
            return
        }
        #expect(missing.message.contains("asks about the cohort 'pilot', which 'cohorts' does not name"), "\(missing.message)")
        let rows: [(JSONValue, String)] = [
            (.array([.object(["name": .string("pilot"), "sha256": .string("ab"), "count": .integer(2)])]), "expected 64 lowercase hex"),
            (.array([.object(["name": .string("in"), "sha256": .string(String(repeating: "ab", count: 32)), "count": .integer(2)])]), "keyword"),
            (
                .array([.object(["name": .string("pilot"), "sha256": .string(String(repeating: "ab", count: 32)), "count": .integer(100_001)])]),
                "count"
            ),
            (
                .array([.object(["name": .string("pilot"), "sha256": .string(String(repeating: "ab", count: 32))])]),
                "exactly 'name', 'sha256' and 'count'"
            ),
            (.string("pilot"), "must be an array"),
        ]
        for (value, says) in rows {
            let result = try Self.signed { $0["cohorts"] = value }
            guard case .failure(let rejection) = result else {
                Issue.record("cohorts \(value) was accepted")
                continue
            }
            #expect(rejection.message.contains(says), "\(rejection.message)")
        }
    }
}
