import ClientServer
import Foundation

/// A ``FileAnswer`` made ready for WebKit off the main thread: bytes in memory, or an open
/// descriptor positioned at the first byte when the body runs to the end of the file (a
/// whole file, or a media range `bytes=N-`), so large files stream without being read whole.
struct PreparedAnswer: Sendable {
    enum Source: Sendable {
        case bytes(Data)
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

    static func make(_ answer: FileAnswer) async throws -> PreparedAnswer {
        var headers = answer.headers
        let contentType = answer.header("Content-Type")
        let isDocument = contentType?.hasPrefix("text/html") == true && answer.status == 200
        var prepared = PreparedAnswer(
            status: answer.status, headers: headers, contentType: contentType, source: .bytes(Data()), length: 0,
            version: answer.version, isDocument: isDocument)
        switch answer.body {
        case .none:
            break
        case .bytes(let buffer):
            prepared.source = .bytes(Data(buffer.readableBytesView))
            prepared.length = Int64(buffer.readableBytes)
        case .file(let path, let size, let range):
            if range.upperBound == size - 1 {
                prepared.source = .descriptor(try await FileAnswer.openFile(path: path, size: size, at: range.lowerBound))
                prepared.length = range.upperBound - range.lowerBound + 1
            } else {
                // A bounded range: read into memory, at most `rangeLimit` bytes of it.
                let upper = min(range.upperBound, range.lowerBound + AppScheme.rangeLimit - 1)
                let bytes = try await FileAnswer.readFile(path: path, size: size, range: range.lowerBound...upper)
                prepared.source = .bytes(Data(bytes.readableBytesView))
                prepared.length = Int64(bytes.readableBytes)
                if upper != range.upperBound {
                    headers.removeAll { $0.name == "Content-Range" || $0.name == "Content-Length" }
                    headers.append(("Content-Range", "bytes \(range.lowerBound)-\(upper)/\(size)"))
                    headers.append(("Content-Length", String(prepared.length)))
                    prepared.headers = headers
                }
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
        let data = Data(text.utf8)
        return PreparedAnswer(
            status: status, headers: [("Cache-Control", "no-cache")], contentType: "text/plain; charset=utf-8",
            source: .bytes(data), length: Int64(data.count), version: nil, isDocument: false)
    }
}
