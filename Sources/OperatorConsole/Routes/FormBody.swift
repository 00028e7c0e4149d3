import Foundation
import Hummingbird

/// A POSTed form (`application/x-www-form-urlencoded`), read whole up to ``maxBytes``.
struct FormBody: Sendable {
    /// The largest form read: a login or an act is a few hundred bytes.
    static let maxBytes = 8 * 1024

    /// The fields, the first of each name.
    let fields: [String: String]

    subscript(_ name: String) -> String? { fields[name] }

    /// Why a body is not a form the console takes.
    enum Problem: Error, Equatable {
        case tooLarge
        case notAForm(String)
    }

    /// Reads and parses `request`'s body.
    static func read(_ request: Request) async -> Result<FormBody, Problem> {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            return .failure(.notAForm("the body is not a form (Content-Type: \(type.isEmpty ? "none" : type))"))
        }
        var bytes: [UInt8] = []
        do {
            for try await chunk in request.body {
                guard bytes.count + chunk.readableBytes <= maxBytes else { return .failure(.tooLarge) }
                bytes.append(contentsOf: chunk.readableBytesView)
            }
        } catch {
            return .failure(.notAForm("the body could not be read"))
        }
        return parse(String(decoding: bytes, as: UTF8.self)).map { FormBody(fields: $0) }
    }

    /// `a=1&b=two+words` → fields; `+` is a space, `%XX` a byte.
    static func parse(_ text: String) -> Result<[String: String], Problem> {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
                return .failure(.notAForm("the form is not percent-encoded UTF-8"))
            }
            if fields[name] == nil { fields[name] = value }
        }
        return .success(fields)
    }

    private static func decode(_ part: Substring) -> String? {
        part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
