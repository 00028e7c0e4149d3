import ClientFoundation
import Foundation

/// The OpenPGP key that signs an apt repository's `Release` files, held in a GNUPGHOME of
/// its own (a temporary folder, mode 0700): the given key is imported there, so the user's
/// keyring is never read or written, and the folder and its gpg-agent go when ``close()``
/// runs.
///
/// Opening checks that the key really signs: one secret key that signs a probe without a
/// passphrase (`--pinentry-mode error`: nothing ever prompts).
package final class ArchiveSigner {
    /// The GNUPGHOME.
    let home: String
    /// The signing key's fingerprint.
    package let fingerprint: String
    /// Seconds a gpg run may take.
    static let timeout: Duration = .seconds(120)

    /// Imports `keyFile` into a fresh GNUPGHOME and checks it signs.
    /// - Throws: ``PackageError`` `.notFound` (no such file), `.unusableKey` (garbage, a
    ///   public key only, several keys, a passphrase), `.toolFailed` (no gpg).
    package init(keyFile: String) throws {
        var st = stat()
        guard stat(keyFile, &st) == 0 else { throw PackageError(.notFound, "--gpg-key \(keyFile): no such file") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw PackageError(.unusableKey, "--gpg-key \(keyFile) is not a regular file") }
        guard let data = try BoundedFile.read(keyFile, cap: 1 << 20, code: PackageErrorCode.unusableKey) else {
            throw PackageError(.notFound, "--gpg-key \(keyFile): no such file")
        }
        // Checked before gpg sees it: a file that is no key, or no secret key, is named as such.
        let key = try OpenPGPKey(data, label: "--gpg-key \(keyFile)")
        guard key.hasSecretKey else {
            throw PackageError(.unusableKey, "--gpg-key \(keyFile) is a public key: repo signs with an OpenPGP secret key")
        }
        var template = Array((NSTemporaryDirectory() + "clientctl-gpg-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw PackageError(.io, "cannot create a GNUPGHOME: \(String(cString: strerror(errno)))")
        }
        let home = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        do {
            fingerprint = try Self.importKey(keyFile, home: home)
        } catch {
            Self.close(home)
            throw error
        }
        self.home = home
    }

    /// Imports the key into `home` and signs a probe with it.
    /// - Returns: the fingerprint of its one secret key.
    static func importKey(_ keyFile: String, home: String) throws -> String {
        _ = try gpg(home, ["--import", keyFile])
        let listing = try gpg(home, ["--with-colons", "--list-secret-keys"]).standardOutput
        var fingerprints: [String] = []
        var inSecretKey = false
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            if fields.first == "sec" { inSecretKey = true } else if fields.first == "ssb" { inSecretKey = false }
            if fields.first == "fpr", inSecretKey, fields.count > 9 {
                fingerprints.append(String(fields[9]))
                inSecretKey = false
            }
        }
        guard fingerprints.count == 1, let fingerprint = fingerprints.first else {
            throw PackageError(.unusableKey, "--gpg-key \(keyFile) holds \(fingerprints.count) secret keys: give exactly one")
        }
        let probe = home + "/probe"
        try AtomicFile.write(Data("clientctl probe\n".utf8), to: probe)
        do {
            _ = try gpg(home, ["--local-user", fingerprint, "--detach-sign", "--output", probe + ".sig", probe])
        } catch {
            throw PackageError(
                .unusableKey, "--gpg-key \(keyFile) cannot sign without a passphrase (remove it for the signing machine, or use a subkey)")
        }
        return fingerprint
    }

    /// Signs `dists/SUITE/Release`: `InRelease` (clear-signed) and `Release.gpg` (detached),
    /// with SHA-512 (apt refuses SHA-1).
    package func sign(release: String) throws {
        let folder = (release as NSString).deletingLastPathComponent
        for name in ["InRelease", "Release.gpg"] { unlink(folder + "/" + name) }
        _ = try Self.gpg(
            home, ["--local-user", fingerprint, "--digest-algo", "SHA512", "--clearsign", "--output", folder + "/InRelease", release])
        _ = try Self.gpg(
            home,
            ["--local-user", fingerprint, "--digest-algo", "SHA512", "--armor", "--detach-sign", "--output", folder + "/Release.gpg", release])
    }

    /// Stops the GNUPGHOME's gpg-agent and removes the folder.
    package func close() { Self.close(home) }

    static func close(_ home: String) {
        _ = try? ToolRun(tool: "gpgconf", arguments: ["--homedir", home, "--kill", "all"], timeout: .seconds(30)).run(scratch: home)
        try? AtomicFile.removeTree(home)
    }

    static func gpg(_ home: String, _ arguments: [String]) throws -> ToolRun.Output {
        try ToolRun(
            tool: "gpg",
            arguments: ["--homedir", home, "--batch", "--no-tty", "--yes", "--pinentry-mode", "error", "--no-auto-check-trustdb"] + arguments,
            timeout: timeout
        ).run(scratch: home)
    }
}
