import ClientUpdater
import Foundation
import Hummingbird
import StrictJSON

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

    /// What a POST's body says besides the version: `holdUpdate`'s seconds and lease id,
    /// `setChannel`'s channel.
    struct Body: Equatable {
        var version: String?
        var seconds: Double?
        var lease: String?
        /// `setChannel`'s channel name (its rule is the device's, checked by the handler).
        var channel: String?
    }

    static func read(_ request: Request) async -> Result<String?, Refusal> {
        await readBody(request).map(\.version)
    }

    static func readBody(_ request: Request) async -> Result<Body, Refusal> {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch {
            return .failure(Refusal(message: "the body is not a JSON object of at most \(maxBytes) bytes"))
        }
        return parseBody(Data(buffer.readableBytesView))
    }

    static func parse(_ data: Data) -> Result<String?, Refusal> {
        parseBody(data).map(\.version)
    }

    static func parseBody(_ data: Data) -> Result<Body, Refusal> {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .success(Body()) }
        // StrictJSON keeps true apart from 1 (Foundation's reader on Linux does not).
        guard let object = try? StrictJSON.parseObject(data, limits: .init(maxBytes: maxBytes, maxDepth: 2), source: "body") else {
            return .failure(Refusal(message: "the body is not a JSON object"))
        }
        var body = Body()
        if let value = object["version"] {
            guard case .string(let version) = value, !version.isEmpty, version.utf8.count <= 128 else {
                return .failure(Refusal(message: "\"version\" must be a version string"))
            }
            body.version = version
        }
        if let value = object["seconds"] {
            let seconds: Double? =
                switch value {
                case .integer(let n): Double(n)
                case .double(let d): d
                default: nil
                }
            guard let seconds, seconds.isFinite, seconds >= 0 else {
                return .failure(Refusal(message: "\"seconds\" must be a number of seconds, 0 or more"))
            }
            body.seconds = seconds
        }
        if let value = object["lease"] {
            guard case .string(let lease) = value, (1...64).contains(lease.utf8.count),
                lease.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D })
            else {
                return .failure(Refusal(message: "\"lease\" must be 1 to 64 letters, digits or dashes"))
            }
            body.lease = lease
        }
        if let value = object["channel"] {
            guard case .string(let channel) = value, (1...128).contains(channel.utf8.count) else {
                return .failure(Refusal(message: "\"channel\" must be a channel name"))
            }
            body.channel = channel
        }
        return .success(body)
    }
}
