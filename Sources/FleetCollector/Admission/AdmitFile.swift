import ClientFoundation
import DeviceIdentity
import Foundation
import ServiceLifecycle
import SignedManifest

/// `--admit-file`: the keys a provisioning step lists, one per line (64 lowercase hex
/// digits; blank lines and `#` comments allowed). Each key read is admitted as by
/// `clientctl fleet admit`; a key removed from the file stays admitted (reject it).
///
/// With `--admit-file-key KEY.pub.pem` the list must be signed: `FILE.sig` beside it holds
/// the 64-byte Ed25519 signature of the file's exact bytes by that key (what `openssl
/// pkeyutl -sign -rawin -inkey KEY.pem -in FILE` writes), so a list that travels by an
/// untrusted path (a config sync, a shared folder) admits nobody unless the provisioning
/// key signed it.
public enum AdmitFile {
    /// The largest file read.
    public static let maxBytes = 4 << 20

    /// The keys of `path`; with `signer`, only when `path.sig` is its signature by that key.
    /// - Throws: ``FleetCollectorError`` `.invalidConfiguration` naming the line that is not
    ///   a key, `.tokenUnreadable` when the file (or its signature) cannot be read,
    ///   `.badSignature` when the signature does not verify.
    public static func keys(path: String, signer: Ed25519.PublicKey? = nil) throws -> [DevicePublicKey] {
        guard let data = try BoundedFile.read(path, cap: maxBytes, code: FleetCollectorErrorCode.tokenUnreadable, tooLarge: .invalidConfiguration)
        else { throw FleetCollectorError(.tokenUnreadable, "--admit-file \(path): no such file") }
        if let signer {
            guard let signature = try BoundedFile.read(path + ".sig", cap: 1024, code: FleetCollectorErrorCode.tokenUnreadable) else {
                throw FleetCollectorError(.tokenUnreadable, "--admit-file \(path): no \(path).sig, and --admit-file-key asks for a signed list")
            }
            guard signer.isValidSignature(Array(signature), for: Array(data)) else {
                throw FleetCollectorError(
                    .badSignature, "--admit-file \(path): \(path).sig is not a signature of this list by --admit-file-key (\(signer.keyId))")
            }
        }
        var keys: [DevicePublicKey] = []
        for (n, raw) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let text = line.trimmingCharacters(in: .whitespaces).lowercased()
            if text.isEmpty { continue }
            guard let key = DevicePublicKey(hex: text) else {
                throw FleetCollectorError(.invalidConfiguration, "--admit-file \(path):\(n + 1): not a device key (64 hex digits)")
            }
            keys.append(key)
        }
        return keys
    }
}

/// Admits the keys of the admit file at start and whenever the file changes.
struct AdmitFileService: Service {
    let collector: Collector
    let path: String
    let signer: Ed25519.PublicKey?

    func run() async throws {
        var seen: (Int, Int)?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var info = stat()
            if stat(path, &info) == 0 {
                let stamp = (Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec), Int(info.st_size))
                if seen.map({ $0 != stamp }) ?? true {
                    do {
                        let keys = try AdmitFile.keys(path: path, signer: signer)
                        if !keys.isEmpty {
                            let rejected = try await collector.store.rejectedKeys(among: keys).count
                            let change = try await collector.store.admit(keys.map(DeviceReference.key), now: collector.now(), byOperator: false)
                            collector.logger.notice(
                                "--admit-file \(path): \(keys.count) keys, \(change.devices) devices admitted now, \(rejected) rejected by an operator left out"
                            )
                        }
                        seen = stamp
                    } catch {
                        collector.logger.error("\(error)")
                    }
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(30)) }
        }
    }
}
