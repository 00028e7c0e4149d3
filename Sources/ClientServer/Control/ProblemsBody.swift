import Foundation
import Hummingbird
import StrictJSON

/// The body of `POST /__clientctl/problems` (docs/serving.md#control-endpoints): what the
/// shim coalesced since its last post, `{"errors": 12, "messages": ["…"], "app": ["sync-failed"],
/// "version": "1.3.0"}`; every member may be left out, any other member is refused.
struct ProblemsBody: Equatable {
    /// A coalesced post of the shim is far smaller: 3 messages and 20 kinds, cut short.
    static let maxBytes = 8 * 1024
    /// Distinct messages a post may carry.
    static let maxMessages = 3
    /// The longest message, in characters (the agent keeps fewer).
    static let maxMessageLength = 256
    /// App-defined problems a post may carry.
    static let maxKinds = 20

    var errors: Int64 = 0
    var messages: [String] = []
    /// The kinds of `reportProblem(kind)` calls, one entry per call (their rule is the agent's).
    var app: [String] = []
    /// The version the page was served with.
    var version: String?

    static func read(_ request: Request) async -> Result<ProblemsBody, PageVersion.Refusal> {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch {
            return .failure(PageVersion.Refusal(message: "the body is longer than \(maxBytes) bytes"))
        }
        return parse(Data(buffer.readableBytesView))
    }

    static func parse(_ data: Data) -> Result<ProblemsBody, PageVersion.Refusal> {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(data, limits: .init(maxBytes: maxBytes, maxDepth: 2), source: "body")
        } catch {
            return .failure(PageVersion.Refusal(message: "the body is not a JSON object of at most \(maxBytes) bytes"))
        }
        var body = ProblemsBody()
        for member in object {
            switch member.key {
            case "errors":
                guard case .integer(let n) = member.value, n >= 0 else {
                    return .failure(PageVersion.Refusal(message: "\"errors\" must be a whole number, 0 or more"))
                }
                body.errors = n
            case "messages":
                guard let list = strings(member.value), list.count <= maxMessages, list.allSatisfy({ $0.count <= maxMessageLength }) else {
                    return .failure(
                        PageVersion.Refusal(
                            message: "\"messages\" must be a list of at most \(maxMessages) strings of at most \(maxMessageLength) characters"))
                }
                body.messages = list
            case "app":
                guard let list = strings(member.value), list.count <= maxKinds else {
                    return .failure(PageVersion.Refusal(message: "\"app\" must be a list of at most \(maxKinds) problem kinds"))
                }
                body.app = list
            case "version":
                guard case .string(let version) = member.value, !version.isEmpty, version.utf8.count <= 128 else {
                    return .failure(PageVersion.Refusal(message: "\"version\" must be a version string"))
                }
                body.version = version
            case let other:
                let name = String(other.prefix(32)).unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "?" }.joined()
                return .failure(PageVersion.Refusal(message: "unknown member \"\(name)\" (errors, messages, app and version are known)"))
            }
        }
        return .success(body)
    }

    /// The strings of a JSON array of strings only.
    private static func strings(_ value: JSONValue) -> [String]? {
        guard case .array(let items) = value else { return nil }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else { return nil }
            out.append(s)
        }
        return out
    }
}
