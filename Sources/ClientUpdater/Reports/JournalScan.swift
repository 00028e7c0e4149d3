import FleetReports
import Foundation
import StrictJSON

/// Reading journal lines: the whole file, or its head and tail for an append.
enum JournalScan {
    struct Line {
        var text: String
        var report: FleetReport?
    }

    /// The window read at either end of the file for an append (a line is far shorter).
    static let window = 16 * 1024

    /// Every line of `data`; a last line without its newline (torn) is included, unreadable.
    static func lines(_ data: Data) -> [Line] {
        var out: [Line] = []
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: 0x0A) ?? data.endIndex
            let bytes = data[start..<end]
            if !bytes.isEmpty {
                let complete = end < data.endIndex
                out.append(Line(text: String(decoding: bytes, as: UTF8.self), report: complete ? parse(bytes) : nil))
            }
            start = end < data.endIndex ? data.index(after: end) : end
        }
        return out
    }

    static func parse(_ bytes: some Collection<UInt8>) -> FleetReport? {
        guard let value = try? StrictJSON.parse(bytes, limits: .init(maxBytes: 8192, maxDepth: 3), source: "journal line") else {
            return nil
        }
        return try? ReportBatch.decodeReport(value, path: "journal")
    }

    /// The highest seq among the last window's whole lines, and whether the file ends in a
    /// torn line (no newline).
    static func tail(fd: Int32, size: Int) -> (lastSeq: Int64, torn: Bool, lastTime: Int64?) {
        guard size > 0 else { return (0, false, nil) }
        let length = min(size, window)
        guard let data = pread(fd: fd, offset: size - length, length: length) else { return (0, false, nil) }
        let torn = data.last != 0x0A
        var lines = lines(data)
        if size > length, !lines.isEmpty { lines.removeFirst() }  // cut by the window
        let reports = lines.compactMap(\.report)
        return (reports.map(\.seq).max() ?? 0, torn, reports.map(\.time).max().map(JournalState.millis))
    }

    /// The seq of the first readable line in the first window.
    static func head(fd: Int32, size: Int) -> Int64? {
        guard let data = pread(fd: fd, offset: 0, length: min(size, window)) else { return nil }
        return lines(data).lazy.compactMap(\.report?.seq).first
    }

    static func pread(fd: Int32, offset: Int, length: Int) -> Data? {
        var buffer = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = buffer.withUnsafeMutableBytes { Foundation.pread(fd, $0.baseAddress?.advanced(by: done), length - done, off_t(offset + done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return Data(buffer[0..<done])
    }
}
