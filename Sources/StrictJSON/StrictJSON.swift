import ClientFoundation
import Foundation

/// A strict RFC 8259 JSON parser for untrusted input (manifests fetched by devices).
///
/// Beyond the grammar it refuses everything that could make two readers disagree about
/// what a document says: duplicate object keys (also keys that are canonically equivalent
/// Unicode), trailing data after the value, a byte order mark, invalid UTF-8 (overlong
/// forms, encoded surrogates, code points above U+10FFFF), lone surrogate escapes,
/// unescaped control characters, nesting deeper than ``Limits/maxDepth``, documents larger
/// than ``Limits/maxBytes``, and numbers too large for a double.
///
/// Numbers without fraction or exponent within ±(2⁵³−1) become exact
/// ``JSONValue/integer(_:)``; every other number becomes ``JSONValue/double(_:)``, which is
/// how RFC 8785 (whose numbers are IEEE doubles) reads them.
///
/// Every error is a ``StrictJSONError`` with code `.malformedJSON` whose message says
/// where (line, column, byte offset) and what, and whose `underlying` is a ``ParseError``.
package enum StrictJSON {
    /// Caps applied while parsing.
    package struct Limits: Sendable, Equatable {
        /// Largest accepted document, in bytes.
        package var maxBytes: Int
        /// Deepest accepted nesting of arrays and objects (the top-level container is 1).
        package var maxDepth: Int

        package init(maxBytes: Int, maxDepth: Int = 32) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
        }

        /// For one manifest: 64 KiB (docs/formats.md#strict-json), depth 32.
        package static let manifest = Limits(maxBytes: 64 * 1024, maxDepth: 32)
        /// For `index.json`, which holds every release of a channel: 16 MiB, depth 32.
        package static let index = Limits(maxBytes: 16 * 1024 * 1024, maxDepth: 32)
    }

    /// Where and why parsing stopped.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Byte offset of the problem (0-based).
        package var offset: Int
        /// Line of the problem (1-based).
        package var line: Int
        /// Column of the problem in bytes (1-based).
        package var column: Int
        /// What is wrong, e.g. `duplicate key "app"`.
        package var reason: String

        package var description: String { "line \(line), column \(column) (byte \(offset)): \(reason)" }
    }

    /// Parses one JSON document.
    /// - Parameters:
    ///   - bytes: the whole document.
    ///   - limits: caps; ``Limits/manifest`` by default.
    ///   - source: names the document in error messages (a path or URL).
    package static func parse<Bytes: Collection>(_ bytes: Bytes, limits: Limits = .manifest, source: String = "JSON") throws -> JSONValue
    where Bytes.Element == UInt8 {
        let count = bytes.count
        guard count <= limits.maxBytes else {
            let err = ParseError(
                offset: limits.maxBytes, line: 1, column: 1,
                reason: "document is \(count) bytes, more than the \(limits.maxBytes)-byte limit")
            throw StrictJSONError(.malformedJSON, "\(source): \(err.reason)", underlying: err)
        }
        let array = Array(bytes)
        var parser = Parser(bytes: array, maxDepth: limits.maxDepth)
        do {
            return try parser.document()
        } catch let failure as Failure {
            let err = position(of: failure, in: array)
            throw StrictJSONError(.malformedJSON, "\(source): invalid JSON at \(err)", underlying: err)
        }
    }

    /// Parses a document whose top level must be an object.
    package static func parseObject<Bytes: Collection>(_ bytes: Bytes, limits: Limits = .manifest, source: String = "JSON") throws -> JSONObject
    where Bytes.Element == UInt8 {
        let value = try parse(bytes, limits: limits, source: source)
        guard case .object(let object) = value else {
            let err = ParseError(offset: 0, line: 1, column: 1, reason: "top level is \(value.typeName), expected an object")
            throw StrictJSONError(.malformedJSON, "\(source): \(err.reason)", underlying: err)
        }
        return object
    }

    struct Failure: Error {
        var offset: Int
        var reason: String
    }

    static func position(of failure: Failure, in bytes: [UInt8]) -> ParseError {
        var line = 1
        var column = 1
        for b in bytes.prefix(failure.offset) {
            if b == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return ParseError(offset: failure.offset, line: line, column: column, reason: failure.reason)
    }
}
