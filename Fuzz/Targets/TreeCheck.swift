import Foundation

@testable import SafeArchive
@testable import SignedManifest

/// Walks an extracted tree with `lstat` (never following anything) and checks the entry rule
/// independently of the extractor's own bookkeeping.
struct TreeCheck {
    var target: String
    var limits: ExtractionLimits

    func check(_ root: String, report: ExtractionReport) {
        var files = 0
        var directories = 0
        var bytes: UInt64 = 0
        var pending = [("", 0)]
        while let (relative, depth) = pending.popLast() {
            let path = relative.isEmpty ? root : "\(root)/\(relative)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                FuzzFinding.fail(target, "cannot list \(relative)")
            }
            for entry in names {
                let child = relative.isEmpty ? entry : "\(relative)/\(entry)"
                checkName(entry)
                var info = stat()
                guard lstat("\(root)/\(child)", &info) == 0 else { FuzzFinding.fail(target, "cannot lstat \(child)") }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    guard info.st_mode & 0o7777 == 0o755 else {
                        FuzzFinding.fail(target, "directory \(child) has mode \(String(info.st_mode & 0o7777, radix: 8))")
                    }
                    directories += 1
                    guard depth + 1 <= limits.maxDepth else { FuzzFinding.fail(target, "tree deeper than \(limits.maxDepth)") }
                    pending.append((child, depth + 1))
                case S_IFREG:
                    guard info.st_mode & 0o7777 == 0o644 else {
                        FuzzFinding.fail(target, "file \(child) has mode \(String(info.st_mode & 0o7777, radix: 8))")
                    }
                    guard info.st_nlink == 1 else { FuzzFinding.fail(target, "file \(child) is hard-linked") }
                    files += 1
                    bytes += UInt64(info.st_size)
                default:
                    FuzzFinding.fail(target, "\(child) is neither a regular file nor a directory")
                }
                guard child.utf8.count <= limits.maxPathBytes else { FuzzFinding.fail(target, "path longer than the cap") }
            }
        }
        var index = stat()
        guard lstat("\(root)/index.html", &index) == 0, index.st_mode & S_IFMT == S_IFREG else {
            FuzzFinding.fail(target, "accepted a tree without a regular index.html")
        }
        guard bytes <= limits.maxTotalBytes, files + directories <= limits.maxEntries else {
            FuzzFinding.fail(target, "tree exceeds the caps: \(bytes) bytes, \(files + directories) entries")
        }
        guard bytes == report.bytesWritten, files == report.files else {
            FuzzFinding.fail(target, "report says \(report.files) files / \(report.bytesWritten) bytes, disk has \(files) / \(bytes)")
        }
    }

    private func checkName(_ name: String) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, name != ".", name != "..", bytes.count <= limits.maxComponentBytes,
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }),
            !name.unicodeScalars.contains(where: { (0x80..<0xA0).contains($0.value) })
        else { FuzzFinding.fail(target, "entry name \(name.debugDescription) breaks the entry rule") }
    }
}
