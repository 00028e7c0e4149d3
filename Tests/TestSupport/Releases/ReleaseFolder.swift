import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// A release folder for device tests, built in code so tests can also make releases that
/// `clientctl publish` would refuse to write: tampered fields, wrong apps, hostile archives.
///
/// Layout as docs/formats.md#release-folder: `<path>/<channel>/manifest.json`, `index.json`, `v<version>.<ext>`.
public final class ReleaseFolder: @unchecked Sendable {
    // @unchecked: mutated only by the test that owns it, on one task.
    public let path: String
    public let app: String
    public let channel: String
    public let key: Ed25519.PrivateKey
    /// Who signs what ``publish(_:archive:ext:minShell:maxShell:expires:url:makeCurrent:edit:)``
    /// writes: the first as `keyId`/`signature`, the others in `signatures` (default: ``key``).
    public var signers: [Ed25519.PrivateKey]
    private var index: ReleaseIndex

    /// The folder the manifest and archives are in.
    public var channelDirectory: String { path + "/" + channel }

    public init(path: String, app: String = "com.example.notes", channel: String = "stable", key: Ed25519.PrivateKey) throws {
        self.path = path
        self.app = app
        self.channel = channel
        self.key = key
        self.signers = [key]
        self.index = ReleaseIndex(app: app, channel: channel)
        try FileManager.default.createDirectory(atPath: path + "/" + channel, withIntermediateDirectories: true)
    }

    /// The test key of `Keys/` (never trusted outside tests).
    public static func testKey() throws -> Ed25519.PrivateKey {
        try Ed25519.PrivateKey(pemFile: ClientctlBinary.packagePath("Keys/test-signing.pem"))
    }

    /// PEM of the test public key, as config.json stores trusted keys.
    public static func testPublicKeyPEM() throws -> String {
        try String(contentsOfFile: ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), encoding: .utf8)
    }

    /// Writes `archive` as `v<version>.<ext>`, signs a manifest for it, makes it the
    /// newest `manifest.json` (unless `makeCurrent` is false) and adds it to `index.json`.
    /// - Parameter edit: changes to the manifest object before signing (extra fields,
    ///   wrong values that the signature then covers).
    @discardableResult
    public func publish(
        _ version: String, archive: Data, ext: String = "tar.gz", minShell: String = "1.0.0",
        maxShell: String? = nil, expires: Date? = nil, url: String? = nil, makeCurrent: Bool = true,
        edit: ((inout JSONObject) -> Void)? = nil
    ) throws -> JSONObject {
        let name = "v\(version).\(ext)"
        try archive.write(to: URL(fileURLWithPath: channelDirectory + "/" + name))
        var object = JSONObject()
        object["format"] = .string("signed-client-v1")
        object["app"] = .string(app)
        object["channel"] = .string(channel)
        object["version"] = .string(version)
        object["url"] = .string(url ?? name)
        object["sha256"] = .string(Digest.hex(.sha256, of: archive))
        object["size"] = .integer(Int64(archive.count))
        object["minShellVersion"] = .string(minShell)
        if let maxShell { object["maxShellVersion"] = .string(maxShell) }
        object["published"] = .string(RFC3339.format(Date()))
        if let expires { object["expires"] = .string(RFC3339.format(expires)) }
        object["keyId"] = .string((signers.first ?? key).publicKey.keyId)
        edit?(&object)
        let signed = try sign(object)
        if makeCurrent { try writeManifest(signed) }
        index.releases.insert(signed, at: 0)
        try writeIndex()
        return signed
    }

    /// Signs `object` (replacing any `signature` and `signatures`) with ``signers``: the
    /// first as `signature`, every other in `signatures`, all over the same canonical bytes.
    public func sign(_ object: JSONObject) throws -> JSONObject {
        var o = object
        o.removeValue(forKey: "signature")
        o.removeValue(forKey: "signatures")
        let message = CanonicalJSON.serialize(o)
        let all = signers.isEmpty ? [key] : signers
        o["signature"] = .string(Data(try all[0].signature(for: message)).base64EncodedString())
        if all.count > 1 {
            o["signatures"] = .array(
                try all.dropFirst().map { signer in
                    .object([
                        "keyId": .string(signer.publicKey.keyId),
                        "signature": .string(Data(try signer.signature(for: message)).base64EncodedString()),
                    ])
                })
        }
        return o
    }

    /// Writes `draft` signed by `signers` as `root/<number>.json` (default: its version)
    /// beside the manifest, and returns the bytes written.
    @discardableResult
    public func writeRoot(_ draft: RootDraft, signedBy signers: [Ed25519.PrivateKey], as number: Int? = nil) throws -> Data {
        var signed = draft
        for signer in signers { try signed.sign(with: signer) }
        var o = signed.unsignedObject
        o["signatures"] = .array(signed.signatures.map(\.jsonValue))
        let bytes = Data(JSONPrettyPrinter.render(.object(o)))
        try writeRootBytes(bytes, as: number ?? draft.version)
        return bytes
    }

    /// Writes raw bytes as `root/<number>.json`.
    public func writeRootBytes(_ bytes: Data, as number: Int) throws {
        try FileManager.default.createDirectory(atPath: channelDirectory + "/root", withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: channelDirectory + "/root/\(number).json"))
    }

    /// Writes `object` as `manifest.json`, exactly as given.
    public func writeManifest(_ object: JSONObject) throws {
        try writeManifestBytes(Data(JSONPrettyPrinter.render(.object(object))))
    }

    /// Writes raw bytes as `manifest.json` (malformed JSON, oversize bodies…).
    public func writeManifestBytes(_ bytes: Data) throws {
        try bytes.write(to: URL(fileURLWithPath: channelDirectory + "/manifest.json"))
    }

    private func writeIndex() throws {
        try Data(index.jsonBytes()).write(to: URL(fileURLWithPath: channelDirectory + "/index.json"))
    }

    /// A tar.gz of `tree` made by the real `bsdtar` (entries under `./`).
    public static func tarGz(of tree: String) throws -> Data {
        let out = NSTemporaryDirectory() + "/release-\(UUID().uuidString).tar.gz"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try Subprocess.run("bsdtar", ["-czf", out, "-C", tree, "."])
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.errorOutput]) }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// Writes a small client (index.html showing `version`, app.js, a nested asset) and
    /// returns its folder.
    public static func makeClient(at dir: String, version: String, extraFiles: [String: String] = [:]) throws -> String {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/assets/img", withIntermediateDirectories: true)
        let html =
            "<!doctype html><html><head><title>notes</title></head><body><p id=\"version\">\(version)</p><script src=\"app.js\"></script></body></html>\n"
        try Data(html.utf8).write(to: URL(fileURLWithPath: dir + "/index.html"))
        try Data("console.log('notes \(version)');\n".utf8).write(to: URL(fileURLWithPath: dir + "/app.js"))
        try Data("logo-\(version)".utf8).write(to: URL(fileURLWithPath: dir + "/assets/img/logo.png"))
        for (name, content) in extraFiles {
            let full = dir + "/" + name
            try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(content.utf8).write(to: URL(fileURLWithPath: full))
        }
        return dir
    }
}
