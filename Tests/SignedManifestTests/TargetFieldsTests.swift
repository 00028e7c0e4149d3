import ClientFoundation
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The signed fields of targeting (docs/formats.md#manifest, docs/targeting.md): `target`,
/// `alongside`, `pins` and a rollout's `draw` and `from`, read strictly; every refusal
/// names the field and why, and the manifest is rejected whole.
@Suite struct TargetFieldsTests {
    static let digest = String(repeating: "0a", count: 32)

    /// The sample manifest of 1.2.3 with `field` set to `json`, validated (not signed: the
    /// fields are read after the signatures verified).
    static func read(_ field: String, _ json: String) throws -> Result<Manifest, ManifestRejection> {
        var o = ManifestSamples.draft().unsignedObject(keyId: String(repeating: "0", count: 16))
        o["signature"] = .string(Data(repeating: 0, count: 64).base64EncodedString())
        o[field] = try StrictJSON.parse(Array(json.utf8))
        return Manifest.validate(o)
    }

    @Test func theFieldsReadBack() throws {
        let m = try Self.read("target", #""store in (12,14) and not ring=beta""#).get()
        #expect(m.target?.description == "store in (12, 14) and not ring = beta")
        let beside = try Self.read(
            "alongside", #"[{"version": "1.0.0", "sha256": "\#(Self.digest)"}, {"version": "1.2.0", "sha256": "\#(Self.digest)"}]"#
        )
        .get()
        #expect(beside.alongside.map(\.version.description) == ["1.2.0", "1.0.0"], "newest first")
        let pinned = try Self.read("pins", #"[{"target": "site = lobby", "version": "1.2.3", "sha256": "\#(Self.digest)"}]"#).get()
        #expect(pinned.pins.first?.release.version == Version(1, 2, 3) && pinned.pins.first?.target.description == "site = lobby")
    }

    static let refusals: [(String, String, String)] = [
        ("target", "12", "field 'target' must be a string, got integer"),
        ("target", #""store ==""#, "field 'target' is not a target: target 'store ==': expected a value at character 8, got '='"),
        ("target", #""""#, "field 'target' is not a target: target '': is empty"),
        ("alongside", #"{"version": "1.0.0"}"#, "field 'alongside' must be an array of {\"version\", \"sha256\"} objects"),
        (
            "alongside", "[" + (0..<5).map { #"{"version": "1.0.\#($0)", "sha256": "\#(digest)"}"# }.joined(separator: ",") + "]",
            "field 'alongside' names 5 releases, at most 4"
        ),
        ("alongside", #"[{"version": "1.2.3", "sha256": "\#(digest)"}]"#, "field 'alongside' names 1.2.3, not below the release's own 1.2.3"),
        (
            "alongside", #"[{"version": "1.0.0", "sha256": "\#(digest)"}, {"version": "1.0.0", "sha256": "\#(digest)"}]"#,
            "field 'alongside' names 1.0.0 twice"
        ),
        ("alongside", #"[{"version": "1.0.0"}]"#, "field 'alongside' entries must be objects with exactly 'version' and 'sha256'"),
        ("alongside", #"[{"version": "1.0.0", "sha256": "AB"}]"#, "field 'sha256' is 'AB': expected 64 lowercase hex characters"),
        ("pins", #"[{"target": "a = 1", "version": "1.3.0", "sha256": "\#(digest)"}]"#, "field 'pins' pins to 1.3.0, above the release's own 1.2.3"),
        (
            "pins", #"[{"version": "1.0.0", "sha256": "\#(digest)"}]"#,
            "field 'pins' entries must be objects with exactly 'target', 'version' and 'sha256'"
        ),
        (
            "pins", "[" + (0..<17).map { _ in #"{"target": "a = 1", "version": "1.0.0", "sha256": "\#(digest)"}"# }.joined(separator: ",") + "]",
            "field 'pins' holds 17 pins, at most 16"
        ),
        ("rollout", #"{"percent": 60, "from": 50}"#, "field 'rollout' takes places from 50.0 % to 110.0 %, past 100 %"),
        (
            "rollout", #"{"percent": 10, "draw": "a b"}"#,
            "field 'rollout' member 'draw' must be a name of 1 to 64 letters, digits, '.', '_', '-' or '+'"
        ),
        ("rollout", #"{"percent": 10, "from": -1}"#, "field 'rollout' percent -1.0 is not between 0 and 100"),
    ]

    @Test(arguments: refusals)
    func aBadFieldRejectsTheManifestNamingIt(field: String, json: String, message: String) throws {
        switch try Self.read(field, json) {
        case .success: Issue.record("\(field) \(json) was accepted")
        case .failure(let rejection): #expect(rejection.message == message)
        }
    }

    @Test func aDrawAndAnOffsetPlaceTheRolloutAndRoundTrip() throws {
        let object = try StrictJSON.parseObject(Array(#"{"rollout": {"percent": 30, "draw": "1.5.0-rc.1", "from": 50}}"#.utf8))
        let rollout = try Rollout.parse(object["rollout"] ?? .null)
        #expect(rollout.draw == "1.5.0-rc.1" && rollout.from == 50 && rollout.places(percent: 30) == 5_000..<8_000)
        #expect(try Rollout.parse(rollout.jsonValue) == rollout)
        let now = Date()
        #expect(rollout.admits(bucket: 5_000, at: now) && rollout.admits(bucket: 7_999, at: now))
        #expect(!rollout.admits(bucket: 4_999, at: now) && !rollout.admits(bucket: 8_000, at: now))
        #expect(Rollout.bucket(channel: "stable", version: "1.2.0", deviceId: "d") == Rollout.bucket(channel: "stable", draw: "1.2.0", deviceId: "d"))
        #expect(Rollout.percent(25).jsonValue == .integer(25), "without a draw a plain percent is written as one")
    }

    /// A restriction's target narrows the release's: both must admit a device.
    @Test func aRestrictionCarriesATargetAndRestrictsWithItAlone() async throws {
        let key = try Ed25519.PrivateKey.generate()
        let manifest = try ManifestSamples.draft().signed(with: key)
        var draft = RestrictionDraft(for: manifest, issued: ManifestSamples.published, expires: ManifestSamples.published.addingTimeInterval(3_600))
        draft.target = try TargetExpression(parsing: "site = lobby")
        let r = try await draft.sign(by: [key])
        #expect(r.target?.description == "site = lobby" && r.percent == nil && !r.paused && r.revoked.isEmpty)
        let parsed = try Restriction.parse(r.jsonBytes(), source: "restriction.json")
        #expect(parsed.target == r.target)
    }
}
