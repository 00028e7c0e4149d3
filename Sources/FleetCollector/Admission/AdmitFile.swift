import ClientFoundation
import Foundation
import ServiceLifecycle

/// `--admit-file`: the keys a provisioning step lists, one per line (64 lowercase hex
/// digits; blank lines and `#` comments allowed). Each key read is admitted as by
/// `clientctl fleet admit`; a key removed from the file stays admitted (reject it).
public enum AdmitFile {
    /// The largest file read.
    public static let maxBytes = 4 << 20

    /// The keys of `path`.
    /// - Throws: ``FleetCollectorError`` `.invalidConfiguration` naming the line that is not a key,
    ///   `.tokenUnreadable` when the file cannot be read.
    public static func keys(path: String) throws -> [String] {
        guard let data = try BoundedFile.read(path, cap: maxBytes, code: FleetCollectorErrorCode.tokenUnreadable, tooLarge: .invalidConfiguration)
        else { throw FleetCollectorError(.tokenUnreadable, "--admit-file \(path): no such file") }
        var keys: [String] = []
        for (n, raw) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let key = line.trimmingCharacters(in: .whitespaces).lowercased()
            if key.isEmpty { continue }
            guard key.utf8.count == 64, key.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
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

    func run() async throws {
        var seen: (Int, Int)?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var info = stat()
            if stat(path, &info) == 0 {
                let stamp = (Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec), Int(info.st_size))
                if seen.map({ $0 != stamp }) ?? true {
                    do {
                        let keys = try AdmitFile.keys(path: path)
                        if !keys.isEmpty {
                            let change = try await collector.store.admit(keys, now: collector.now())
                            collector.logger.notice("--admit-file \(path): \(keys.count) keys, \(change.devices) devices admitted now")
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
