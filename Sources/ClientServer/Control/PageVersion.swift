import ClientUpdater
import Foundation
import Hummingbird

/// The body of the shim's POSTs: `{"version": "1.3.0"}`, the version the page was served
/// with. An empty body (or `{}`) names no version: pages organized by an older clientctl,
/// and `curl`, are answered as before.
enum PageVersion {
    /// Why a body was refused (`400`).
    struct Refusal: Error {
        let message: String
    }

    /// Bodies are tiny; anything longer is not a shim's.
    static let maxBytes = 1024

    static func read(_ request: Request) async -> Result<String?, Refusal> {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch {
            return .failure(Refusal(message: "the body is not a JSON object of at most \(maxBytes) bytes"))
        }
        return parse(Data(buffer.readableBytesView))
    }

    static func parse(_ data: Data) -> Result<String?, Refusal> {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .success(nil) }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return .failure(Refusal(message: "the body is not a JSON object"))
        }
        guard let value = object["version"] else { return .success(nil) }
        guard let version = value as? String, !version.isEmpty, version.utf8.count <= 128 else {
            return .failure(Refusal(message: "\"version\" must be a version string"))
        }
        return .success(version)
    }
}
