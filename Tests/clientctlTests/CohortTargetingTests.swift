import ClientFoundation
import Foundation
import SignedManifest
import TestSupport
import Testing

/// Cohorts as users run them (docs/targeting.md#cohorts): `clientctl cohort set` writes a
/// list of device ids, `publish --target '… id in cohort NAME'` names it by its SHA-256,
/// and each device, served by a real HTTP server on 127.0.0.1, reads the file only when
/// its answer decides, once per version of the list.
@Suite struct CohortTargetingTests {
    /// Random device ids: `count` of them, none equal to `except`.
    static func otherIds(_ count: Int, except: Set<String>) -> [String] {
        var out: [String] = []
        while out.count < count {
            let id = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            if !except.contains(id) { out.append(id) }
        }
        return out
    }

    /// The requests for cohort files the server answered since its log was cleared.
    static func cohortReads(_ rig: TargetingRig) -> [String] {
        rig.server.requests.map(\.target).filter { $0.contains("/cohorts/") }
    }

    /// A release for the beta devices of the cohort `pilot`: a stable device decides on its
    /// label alone and reads no cohort byte; a beta device in the list takes the release
    /// after one read; one not in it keeps what it runs and never reads the file again
    /// while it is unchanged; a new list re-signs the release, and that device takes it.
    @Test func aCohortIsReadOnlyByTheDevicesWhoseAnswerItDecidesAndOncePerList() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let a = try await rig.device("a", labels: ["ring=beta"])
        let b = try await rig.device("b", labels: ["ring=beta"])
        let c = try await rig.device("c", labels: ["ring=stable"])
        for root in [a, b, c] { #expect(try await rig.install(root).version == "1.0.0") }
        let idA = try #require(try await rig.status(a).deviceId)
        let idB = try #require(try await rig.status(b).deviceId)

        let list = rig.dir("pilot.txt")
        let others = Self.otherIds(500, except: [idA, idB])
        try Data((["# the pilot stores", idA, ""] + others).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        let set = try await rig.clientctl(["cohort", "set", "stable", "pilot", "--ids", list, "--out", rig.dir("rel"), "--key", rig.key])
        #expect(set.output.hasPrefix("cohort pilot of stable: 501 devices, sha256 "), "\(set.output)")

        try await rig.publish("1.1.0", ["--target", "ring = beta and id in cohort pilot"])
        let first = try rig.manifest()
        let pilot = try #require(first.cohort(named: "pilot"))
        #expect(pilot.count == 501)
        let copy = try Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/" + pilot.path))
        #expect(Digest.hex(.sha256, of: copy) == pilot.digest && copy.count == 501 * 33)

        rig.server.clearLog()
        let stable = try await rig.install(c)
        #expect(stable.result == .skipped && stable.message.contains("ring=stable"), "\(stable)")
        #expect(Self.cohortReads(rig).isEmpty, "a device its label rules out reads no byte of the cohort")

        #expect(try await rig.install(a).version == "1.1.0")
        #expect(Self.cohortReads(rig) == ["/stable/" + pilot.path], "the listed device read the file once")

        rig.server.clearLog()
        let outside = try await rig.install(b)
        #expect(outside.result == .skipped, "\(outside)")
        #expect(outside.message.hasPrefix("not in the target of release 1.1.0 `ring = beta and id in cohort pilot`"), "\(outside.message)")
        #expect(Self.cohortReads(rig).count == 1)
        rig.server.clearLog()
        #expect(try await rig.install(b).result == .skipped)
        #expect(Self.cohortReads(rig).isEmpty, "the answer is kept while the list is the same")

        try Data((["# the pilot stores", idA, idB] + others).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        let again = try await rig.clientctl(["cohort", "set", "stable", "pilot", "--ids", list, "--out", rig.dir("rel"), "--key", rig.key])
        #expect(again.output.contains("re-signed to name it"), "\(again.output)")
        let second = try #require(try rig.manifest().cohort(named: "pilot"))
        #expect(second.count == 502 && second.digest != pilot.digest)
        #expect(try await rig.install(b).version == "1.1.0", "the new list admits the device at its next check")

        let listed = try await rig.clientctl(["cohort", "list", "stable", "--out", rig.dir("rel")])
        #expect(listed.output == "pilot: 502 devices, sha256 \(second.digest); named by the current release\n")
        try await rig.clientctl(["prune", "stable", "--out", rig.dir("rel"), "--keep", "2"])
        #expect(!FileManager.default.fileExists(atPath: rig.channelFolder + "/" + pilot.path), "no kept manifest names the first list")
        #expect(FileManager.default.fileExists(atPath: rig.channelFolder + "/" + second.path))
    }

    /// A cohort file altered on the server (or an older list served under the new name) is
    /// refused: the device keeps what it runs, remembers nothing, and says which file.
    /// A list with a line that is not a device id writes nothing, and a target cannot name
    /// a cohort the channel has no list of.
    @Test func aTamperedCohortFileIsRefusedAndBadListsWriteNothing() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let d = try await rig.device("d", labels: ["ring=beta"])
        #expect(try await rig.install(d).version == "1.0.0")
        let id = try #require(try await rig.status(d).deviceId)

        let bad = rig.dir("bad.txt")
        try Data("\(id)\nnot-an-id\n".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try await rig.clientctl(
            ["cohort", "set", "stable", "pilot", "--ids", bad, "--out", rig.dir("rel"), "--key", rig.key], expect: 64)
        #expect(refused.errorOutput == "clientctl: \(bad) line 2: 'not-an-id' is not a device id (32 lowercase hex digits)\n")
        #expect(!FileManager.default.fileExists(atPath: rig.channelFolder + "/cohorts"), "nothing written")
        let unnamed = try await rig.clientctl(
            ["publish", rig.sample] + [
                "--app", "com.example.notes", "--channel", "stable", "--version", "1.1.0", "--min-shell", "1.0.0", "--key", rig.key, "--out",
                rig.dir("rel"), "--target", "id in cohort pilot",
            ], expect: 66)
        #expect(unnamed.errorOutput.contains("the cohort 'pilot' of"), "\(unnamed.errorOutput)")

        let list = rig.dir("pilot.txt")
        try Data((Self.otherIds(3, except: [id]) + [id]).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        try await rig.clientctl(["cohort", "set", "stable", "pilot", "--ids", list, "--out", rig.dir("rel"), "--key", rig.key])
        try await rig.publish("1.1.0", ["--target", "id in cohort pilot"])
        let cohort = try #require(try rig.manifest().cohort(named: "pilot"))
        let served = rig.channelFolder + "/" + cohort.path
        var bytes = try Data(contentsOf: URL(fileURLWithPath: served))
        bytes[0] = bytes[0] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try bytes.write(to: URL(fileURLWithPath: served))

        let before = try TreeSnapshot(d)
        let copy = try Data(contentsOf: URL(fileURLWithPath: served))
        try FileManager.default.removeItem(atPath: served)
        let missing = try await rig.clientctl(["install", "--root", d], expect: 65)
        #expect(missing.errorOutput.contains("cohorts/pilot/\(cohort.digest).txt is missing (404)"), "\(missing.errorOutput)")
        #expect(try TreeSnapshot(d) == before, "a store that answers 404 changes nothing")
        try copy.write(to: URL(fileURLWithPath: served))
        let tampered = try await rig.clientctl(["install", "--root", d], expect: 65)
        #expect(tampered.errorOutput.contains("cohorts/pilot/\(cohort.digest).txt does not match the SHA-256"), "\(tampered.errorOutput)")
        #expect(try TreeSnapshot(d) == before, "nothing installed, no answer kept")
    }

    /// A list whose bad line holds ESC and BEL (a terminal acts on both: an OSC that retitles
    /// the window, a bell, a clear screen) is refused with them escaped: no byte 0x1B or 0x07
    /// reaches stderr, exit 64, and the channel's `cohorts/pilot.txt` is byte for byte what it
    /// was. A set whose re-signing fails (the signing command dies) leaves it too (issue 75).
    @Test func aFailedSetShowsNoTerminalControlAndLeavesTheListAsItWas() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let ids = Self.otherIds(3, except: [])
        let good = rig.dir("good.txt")
        try Data(ids.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: good))
        try await rig.clientctl(["cohort", "set", "stable", "pilot", "--ids", good, "--out", rig.dir("rel"), "--key", rig.key])
        try await rig.publish("1.1.0", ["--target", "id in cohort pilot"])
        let list = rig.channelFolder + "/cohorts/pilot.txt"
        let before = try Data(contentsOf: URL(fileURLWithPath: list))
        let tree = try TreeSnapshot(rig.channelFolder)

        let bad = rig.dir("bad.txt")
        try Data("\(ids[0])\n\u{1B}]0;owned\u{07}\u{1B}[2J\n".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try await rig.clientctl(
            ["cohort", "set", "stable", "pilot", "--ids", bad, "--out", rig.dir("rel"), "--key", rig.key], expect: 64)
        #expect(!refused.stderr.contains(0x1B) && !refused.stderr.contains(0x07), "\(Array(refused.stderr))")
        #expect(
            refused.errorOutput == "clientctl: \(bad) line 2: '\\u{1b}]0;owned\\u{7}\\u{1b}[2J' is not a device id (32 lowercase hex digits)\n",
            "\(refused.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: list)) == before)
        #expect(try TreeSnapshot(rig.channelFolder) == tree, "nothing written")

        // A good list whose re-signing fails: the signing command exits 1.
        try Data(ids.dropFirst().joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: good))
        let unsigned = try await rig.clientctl(
            [
                "cohort", "set", "stable", "pilot", "--ids", good, "--out", rig.dir("rel"), "--key",
                ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--sign-command", "false",
            ], expect: 69)
        #expect(unsigned.errorOutput.split(separator: "\n").count == 1, "\(unsigned.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: list)) == before, "the list the manifest names is still the channel's")
        #expect(try TreeSnapshot(rig.channelFolder) == tree, "nothing written")
    }
}
