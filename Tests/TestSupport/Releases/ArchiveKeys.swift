import Foundation

/// An OpenPGP key pair for signing a test apt repository, made by gpg itself in a
/// GNUPGHOME of its own (never the user's), dated 30 days back (`--faked-system-time`) so a
/// repository signed in the past with `faketime` still finds the key valid.
public struct ArchiveKey: Sendable {
    /// The armored secret key (what `repo --gpg-key` takes).
    public let secret: String
    /// The armored public key (what `package --apt-key` takes).
    public let publicKey: String
    public let fingerprint: String

    /// Makes a key in `folder/NAME.*`; with `passphrase` the secret key is protected by it.
    public static func make(in folder: String, name: String, passphrase: String? = nil) async throws -> ArchiveKey {
        let home = folder + "/\(name).gnupg"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            return try await make(home: home, folder: folder, name: name, passphrase: passphrase)
        } catch {
            _ = try? await Subprocess.run("gpgconf", ["--homedir", home, "--kill", "all"])
            throw error
        }
    }

    static func make(home: String, folder: String, name: String, passphrase: String?) async throws -> ArchiveKey {
        let back = String(Int(Date().timeIntervalSince1970) - 30 * 86400)
        let base = ["--homedir", home, "--batch", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", passphrase ?? ""]
        let uid = "Test Archive \(name) <\(name)@example.com>"
        let made = try await Subprocess.run("gpg", base + ["--faked-system-time", back, "--quick-gen-key", uid, "ed25519", "sign", "never"])
        guard made.status == 0 else { throw HarnessError("gpg --quick-gen-key: \(made.errorOutput)") }
        let list = try await Subprocess.run("gpg", base + ["--with-colons", "--list-secret-keys"])
        guard
            let fpr = list.output.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") })?.split(
                separator: ":", omittingEmptySubsequences: false),
            fpr.count > 9
        else { throw HarnessError("no fingerprint: \(list.output)") }
        let fingerprint = String(fpr[9])
        let secret = folder + "/\(name).secret.asc"
        let publicKey = folder + "/\(name).public.asc"
        let exportSecret = try await Subprocess.run("gpg", base + ["--armor", "--output", secret, "--export-secret-keys", fingerprint])
        let exportPublic = try await Subprocess.run("gpg", base + ["--armor", "--output", publicKey, "--export", fingerprint])
        guard exportSecret.status == 0, exportPublic.status == 0 else {
            throw HarnessError("gpg --export: \(exportSecret.errorOutput) \(exportPublic.errorOutput)")
        }
        _ = try await Subprocess.run("gpgconf", ["--homedir", home, "--kill", "all"])
        return ArchiveKey(secret: secret, publicKey: publicKey, fingerprint: fingerprint)
    }
}
