import AppPackaging
import Foundation
import TestSupport
import Testing

/// `package --apt-key` reads the key without gpg: the binary it ships is what
/// `gpg --dearmor` makes, a secret key is seen as one, and garbage or a damaged armor is
/// refused.
@Suite struct OpenPGPKeyTests {
    @Test func theArmorComesOffAsGpgTakesItOffAndSecretKeysAreSeen() async throws {
        let tmp = try TemporaryDirectory("openpgp-key")
        let key = try await ArchiveKey.make(in: tmp.path, name: "archive")
        let armored = try Data(contentsOf: URL(fileURLWithPath: key.publicKey))
        let parsed = try OpenPGPKey(armored, label: "public")
        let dearmored = tmp("public.gpg")
        let gpg = try await Subprocess.run("gpg", ["--batch", "--yes", "--dearmor", "--output", dearmored, key.publicKey])
        try #require(gpg.status == 0, "\(gpg.errorOutput)")
        #expect(parsed.binary == (try Data(contentsOf: URL(fileURLWithPath: dearmored))))
        #expect(!parsed.hasSecretKey && parsed.tags.first == 6, "\(parsed.tags)")
        #expect(try OpenPGPKey(parsed.binary, label: "binary").binary == parsed.binary, "a binary key is taken as it is")

        let secret = try OpenPGPKey(try Data(contentsOf: URL(fileURLWithPath: key.secret)), label: "secret")
        #expect(secret.hasSecretKey && secret.tags.first == 5, "\(secret.tags)")
    }

    @Test func garbageAndDamagedArmorAreRefused() async throws {
        let tmp = try TemporaryDirectory("openpgp-bad")
        let key = try await ArchiveKey.make(in: tmp.path, name: "archive")
        let text = try String(contentsOfFile: key.publicKey, encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        // A changed character in the body: the CRC-24 line no longer matches.
        if let index = lines.firstIndex(where: { $0.count > 40 && !$0.hasPrefix("-") }) {
            let line = lines[index]
            let first = line.first == "A" ? "B" : "A"
            lines[index] = first + line.dropFirst()
        }
        for (label, data) in [
            ("garbage", Data("not a key\n".utf8)), ("damaged", Data(lines.joined(separator: "\n").utf8)), ("empty", Data()),
        ] {
            #expect(throws: PackageError.self, "\(label)") { try OpenPGPKey(data, label: label) }
        }
    }
}
