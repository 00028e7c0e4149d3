import Foundation
import SignedManifest

/// Key pair files as `clientctl keygen` writes them: `PREFIX.pem` (PKCS#8 private key,
/// mode 0600) and `PREFIX.pub.pem` (SubjectPublicKeyInfo public key, mode 0644).
package enum KeyFiles {
    /// The paths `generate(prefix:)` writes.
    package static func paths(prefix: String) -> (privateKey: String, publicKey: String) {
        (prefix + ".pem", prefix + ".pub.pem")
    }

    /// Generates a key pair and writes both files; never overwrites anything.
    /// - Returns: the new key's public half (its `keyId` identifies it in manifests).
    /// - Throws: ``ReleaseSigningError`` `.alreadyExists` if either file exists, `.io`.
    @discardableResult
    package static func generate(prefix: String) throws -> Ed25519.PublicKey {
        let (privatePath, publicPath) = paths(prefix: prefix)
        for path in [privatePath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw ReleaseSigningError(.alreadyExists, "\(path) exists already; keygen never overwrites a key (choose another `prefix`)")
        }
        let key = try Ed25519.PrivateKey.generate()
        try create(privatePath, contents: try key.pemRepresentation(), mode: 0o600)
        do {
            try create(publicPath, contents: key.publicKey.pemRepresentation, mode: 0o644)
        } catch {
            unlink(privatePath)
            throw error
        }
        return key.publicKey
    }

    static func create(_ path: String, contents: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code: ReleaseSigningError.Code = errno == EEXIST ? .alreadyExists : .io
            throw ReleaseSigningError(code, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                unlink(path)
                throw ReleaseSigningError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        // The umask may have cleared bits of `mode`; set it exactly (0600 stays 0600).
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            unlink(path)
            throw ReleaseSigningError(.io, "cannot finish \(path): \(String(cString: strerror(errno)))")
        }
    }
}
