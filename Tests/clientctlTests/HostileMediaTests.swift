import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Hostile offline media (docs/offline-media.md#hostile-media, docs/threat-model.md): each
/// stick is refused with one line naming what is wrong and a distinct exit status; the
/// device keeps exactly what it had, no copy is left in its root, and the stick is left
/// as it was.
@Suite struct HostileMediaTests {
    /// One way of spoiling an exported stick: what to do to it, the exit status and a
    /// part of the one-line error.
    struct Attack: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int32
        let says: String
        let spoil: @Sendable (MediaRig) async throws -> Void
        var testDescription: String { name }
    }

    /// Re-signs the stick's `media.json` after `edit` changed its object, with `key`.
    static func resign(_ rig: MediaRig, key: Ed25519.PrivateKey? = nil, _ edit: (inout JSONObject) -> Void) async throws {
        let path = rig.media + "/media.json"
        let index = try MediaIndex.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
        var object = index.object
        object.removeValue(forKey: "signatures")
        edit(&object)
        let signer = try key ?? ReleaseFolder.testKey()
        let signature = try await signer.sign(CanonicalJSON.serialize(object))
        object["signatures"] = .array([DocumentSignature(keyId: signer.publicKey.keyId, signature: signature).jsonValue])
        try Data(JSONPrettyPrinter.render(.object(object))).write(to: URL(fileURLWithPath: path))
    }

    static func replace(_ path: String, with make: (String) throws -> Void) throws {
        try FileManager.default.removeItem(atPath: path)
        try make(path)
    }

    static let attacks: [Attack] = [
        Attack(name: "the archive is a symbolic link", status: 65, says: "is a symbolic link") { rig in
            try replace(rig.media + "/v1.1.0.tar.gz") { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/etc/passwd") }
        },
        Attack(name: "the channel folder is a symbolic link", status: 65, says: "is a symbolic link") { rig in
            let real = rig.dir("stick/clientctl-media/com.example.notes/elsewhere")
            try FileManager.default.moveItem(atPath: rig.media, toPath: real)
            try FileManager.default.createSymbolicLink(atPath: rig.media, withDestinationPath: real)
        },
        Attack(name: "the archive is a hard link", status: 65, says: "hard links") { rig in
            try FileManager.default.linkItem(atPath: rig.media + "/v1.1.0.tar.gz", toPath: rig.dir("stick/elsewhere.tar.gz"))
        },
        Attack(name: "the manifest is a FIFO", status: 65, says: "not a regular file") { rig in
            try replace(rig.media + "/manifest.json") { #expect(mkfifo($0, 0o644) == 0) }
        },
        Attack(name: "media.json is a FIFO", status: 65, says: "not a regular file") { rig in
            try replace(rig.media + "/media.json") { #expect(mkfifo($0, 0o644) == 0) }
        },
        Attack(name: "a huge index", status: 65, says: "over the 4194304 bytes") { rig in
            try Data(repeating: 0x20, count: 5 << 20).write(to: URL(fileURLWithPath: rig.media + "/media.json"))
        },
        Attack(name: "no index", status: 65, says: "has no media.json") { rig in
            try FileManager.default.removeItem(atPath: rig.media + "/media.json")
        },
        Attack(name: "an archive swapped for other bytes of the same size", status: 65, says: "a damaged or swapped file") { rig in
            let path = rig.media + "/v1.1.0.tar.gz"
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))
        },
        Attack(name: "an archive that fills the disk", status: 65, says: "the media index lists") { rig in
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: rig.media + "/v1.1.0.tar.gz"))
            try handle.truncate(atOffset: 1 << 40)  // a sparse terabyte
            try handle.close()
        },
        Attack(name: "an index signed by a stranger", status: 65, says: "signed by 0 of trust root 0's release keys") { rig in
            try await resign(rig, key: try Ed25519.PrivateKey.generate()) { _ in }
        },
        Attack(name: "an index with a path out of its folder", status: 65, says: "has a part starting with '.'") { rig in
            try await resign(rig) { o in
                guard case .array(var files)? = o["files"], case .object(var first)? = files.first else { return }
                first["path"] = .string("../../../etc/passwd")
                files[0] = .object(first)
                o["files"] = .array(files)
            }
        },
        Attack(name: "another app's index in this app's folder", status: 65, says: "is the index of com.example.other") { rig in
            try await resign(rig) { $0["app"] = .string("com.example.other") }
        },
        Attack(name: "a manifest the index does not name", status: 65, says: "is not one its media.json names") { rig in
            try await resign(rig) { o in
                o["releases"] = .array([.object(["version": .string("1.1.0"), "sha256": .string(String(repeating: "0", count: 64))])])
            }
        },
    ]

    @Test(arguments: attacks)
    func hostileMediaIsRefusedAndChangesNothing(attack: Attack) async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        let root = try await rig.device()
        try await rig.clientctl(["install", "--root", root])
        try await rig.publish("1.1.0")
        _ = try await rig.export()
        try await attack.spoil(rig)
        let stick = try MediaRig.snapshot(rig.stick)
        let before = try await rig.held(root)
        rig.server.clearLog()
        // --no-delta: the device holds 1.0.0, and a patch from it would spare it the archive.
        let r = try await ClientctlBinary.run(["install", "--root", root, "--from", rig.stick, "--no-delta"], timeout: .seconds(120))
        #expect(r.status == attack.status, "\(r.errorOutput)")
        let lines = r.errorOutput.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(attack.says), "\(r.errorOutput)")
        #expect(try await rig.held(root) == before, "the device keeps what it had")
        #expect(!FileManager.default.fileExists(atPath: root + "/media-import"))
        #expect(try MediaRig.snapshot(rig.stick) == stick, "the stick is left as it was")
        #expect(rig.server.requests.isEmpty)
    }

    /// Media of another app only: nothing for this device, exit 0, nothing changed; a
    /// folder that is not there: exit 66.
    @Test func anotherAppsMediaIsIgnoredAndAMissingFolderIsNamed() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        _ = try await rig.export()
        let other = try await rig.device("other", app: "com.example.other")
        let r = try await rig.installFrom(other)
        let report = try rig.report(r)
        #expect(report.result == .upToDate && report.message.contains("holds no media for com.example.other"), "\(report)")
        #expect(try await rig.status(other).installed.isEmpty)
        let missing = try await rig.clientctl(["install", "--root", other, "--from", rig.dir("nowhere")], expect: 66)
        #expect(missing.errorOutput.contains("--from \(rig.dir("nowhere")): No such file or directory"), "\(missing.errorOutput)")
    }

    /// A stick whose release's rollout starts later (valid only in the future) installs
    /// nothing now.
    @Test func aReleaseNotYetRolledOutWaits() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0", ["--rollout", "0:0,30d:100"])
        _ = try await rig.export()
        let root = try await rig.device()
        let waiting = try rig.report(try await rig.installFrom(root))
        #expect(waiting.result == .skipped, "\(waiting)")
        #expect(try await rig.status(root).installed.isEmpty)
    }
}

extension HostileMediaTests {
    /// A release key the channel's root retired cannot vouch for media: a thief of the old
    /// key exports a stick from a folder that still names it (root 1 only); a device that
    /// follows root 2 refuses the stick's index and keeps what it runs.
    @Test func aReleaseKeyTheRootRetiredCannotSignMedia() async throws {
        let rig = try MediaRig()
        let old = try ReleaseFolder.testKey()
        let rootKey = try Ed25519.PrivateKey.generate()
        let successor = try Ed25519.PrivateKey.generate()
        let successorPEM = rig.dir("successor.pem")
        try Data(try successor.pemRepresentation().utf8).write(to: URL(fileURLWithPath: successorPEM))
        func writeRoot(_ version: Int, release: Ed25519.PrivateKey, signers: [Ed25519.PrivateKey], into folder: String) throws {
            var draft = RootDraft(
                app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(365 * 86_400), rootKeys: [rootKey.publicKey],
                rootThreshold: 1, releaseKeys: [release.publicKey], releaseThreshold: 1)
            draft.version = version
            for signer in signers { try draft.sign(with: signer) }
            var o = draft.unsignedObject
            o["signatures"] = .array(draft.signatures.map(\.jsonValue))
            try FileManager.default.createDirectory(atPath: folder + "/stable/root", withIntermediateDirectories: true)
            try Data(JSONPrettyPrinter.render(.object(o))).write(to: URL(fileURLWithPath: folder + "/stable/root/\(version).json"))
        }
        try await rig.publish("1.0.0")
        try writeRoot(1, release: old, signers: [old, rootKey], into: rig.dir("rel"))
        let root = try await rig.device()
        try await rig.clientctl(["install", "--root", root])
        // The thief's copy of the folder, before the rotation.
        try FileManager.default.copyItem(atPath: rig.dir("rel"), toPath: rig.dir("stolen"))
        try writeRoot(2, release: successor, signers: [rootKey], into: rig.dir("rel"))
        try await rig.clientctl([
            "publish", rig.sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.1.0", "--min-shell", "1.0.0",
            "--key", successorPEM, "--out", rig.dir("rel"),
        ])
        try await rig.clientctl(["install", "--root", root])
        #expect(try await rig.status(root).trustRoot == 2)
        try await rig.clientctl([
            "publish", rig.sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.2.0", "--min-shell", "1.0.0",
            "--key", rig.key, "--out", rig.dir("stolen"),
        ])
        try await rig.clientctl(["export", "stable", "--from", rig.dir("stolen"), "--to", rig.stick, "--key", rig.key])
        let before = try await rig.held(root)
        let r = try await rig.clientctl(["install", "--root", root, "--from", rig.stick], expect: 65)
        #expect(r.errorOutput.contains("signed by 0 of trust root 2's release keys"), "\(r.errorOutput)")
        #expect(try await rig.held(root) == before)
    }
}
