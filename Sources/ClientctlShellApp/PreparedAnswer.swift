import Foundation
import ServingCore

/// A ``FileAnswer`` made ready for WebKit off the main thread: bytes already in memory
/// (handed over without a copy), or the read end of a pipe that ``ResponsePump`` fills from
/// the file as WebKit reads it (docs/native-shell.md#ranges-and-memory): no file body, whole
/// or ranged, is ever read into the shell's memory.
struct PreparedAnswer: Sendable {
    enum Source: Sendable {
        case bytes(HeldBytes)
        /// Owned: WebKit's stream closes it.
        case descriptor(Int32)
    }

    var status: Int
    var headers: [(name: String, value: String)]
    var contentType: String?
    var source: Source
    var length: Int64
    /// The version that answered.
    var version: String?
    /// The answer is a page (text/html): the view's document version when loaded as one.
    var isDocument: Bool

    /// Prepares `answer`; a file body first waits for one of `slots` (given back when the
    /// pump ends it), so at most `slots.limit` files stream at once and the rest wait their
    /// turn in order.
    static func make(_ answer: FileAnswer, slots: StreamSlots) async throws -> PreparedAnswer {
        let contentType = answer.header("Content-Type")
        let isDocument = contentType?.hasPrefix("text/html") == true && answer.status == 200
        var prepared = PreparedAnswer(
            status: answer.status, headers: answer.headers, contentType: contentType, source: .bytes(HeldBytes("")), length: 0,
            version: answer.version, isDocument: isDocument)
        switch answer.body {
        case .none:
            break
        case .bytes:
            if let held = answer.body.heldBytes {
                prepared.source = .bytes(held)
                prepared.length = Int64(held.count)
            }
        case .file(let path, let size, let range):
            await slots.acquire()
            do {
                let file = try await FileAnswer.openFile(path: path, size: size, at: range.lowerBound)
                let length = range.upperBound - range.lowerBound + 1
                prepared.source = .descriptor(
                    try ResponsePump.shared.stream(file: file, from: range.lowerBound, length: length) { slots.release() })
                prepared.length = length
            } catch {
                slots.release()
                throw error
            }
        }
        return prepared
    }

    /// A 500 with the reason (the serving core threw: the disk, not the request).
    static func failure(_ message: String) -> PreparedAnswer {
        plain(500, "cannot serve: \(message)\n")
    }

    static let notFoundElsewhere = plain(404, "not found: only this app's origin is served\n")
    static let methodNotAllowed = plain(405, "only GET and HEAD are served\n")

    static func plain(_ status: Int, _ text: String) -> PreparedAnswer {
        let bytes = HeldBytes(text)
        return PreparedAnswer(
            status: status, headers: [("Cache-Control", "no-cache")], contentType: "text/plain; charset=utf-8",
            source: .bytes(bytes), length: Int64(bytes.count), version: nil, isDocument: false)
    }
}
