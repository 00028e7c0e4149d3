import SignedManifest

/// What a patch from an older release can save, judged from the two releases' file lists
/// before anything is built (docs/delta-updates.md#publishing).
///
/// A patch reuses content the base holds. Files of the new tree whose SHA-256 the base
/// lists (at any path) are held whole; a changed file the base has under the same path, or
/// under the same name once a bundler's content hash is left out (`assets/index-B2x9Kq1z.js`
/// and `assets/index-C7d1Lp0e.js`), may be partly reused and counts as similar, up to the
/// base file's size. A base whose held and similar bytes are under ``minimumShare`` of the
/// new tree cannot make a patch much smaller than the archive, and costs a full
/// compression pass over the new tree: no patch is built from it.
struct PatchEstimate: Sendable, Equatable {
    /// The smallest share of the new tree's bytes a base must hold or resemble (10 %).
    static let minimumShare = 0.10

    /// Bytes of the new tree whose content the base holds.
    var held: Int64
    /// Bytes of changed files the base has under the same path or hash-free name.
    var similar: Int64
    /// Bytes of the new tree's files.
    var total: Int64

    init(held: Int64, similar: Int64, total: Int64) {
        self.held = held
        self.similar = similar
        self.total = total
    }

    /// Compares the files of the new tree with those of a base.
    init(new: [ReleaseFileList.File], base: [ReleaseFileList.File]) {
        let contents = Set(base.map(\.sha256))
        var byPath: [String: Int64] = [:]
        var byStem: [String: Int64] = [:]
        for file in base {
            byPath[file.path] = file.size
            byStem[Self.stem(file.path), default: 0] += file.size
        }
        var held: Int64 = 0
        var similar: Int64 = 0
        var total: Int64 = 0
        for file in new {
            total += file.size
            if contents.contains(file.sha256) {
                held += file.size
            } else if let size = byPath[file.path] ?? byStem[Self.stem(file.path)] {
                similar += min(file.size, size)
            }
        }
        self.held = held
        self.similar = similar
        self.total = total
    }

    /// The share of the new tree's bytes the base holds or resembles (0–1; 1 for an empty tree).
    var share: Double { total > 0 ? Double(held + similar) / Double(total) : 1 }

    /// True when a patch from this base is worth building.
    var worthBuilding: Bool { share >= Self.minimumShare }

    /// Why no patch is built, for the cost lines: `holds 0.4 % of this release's bytes
    /// (under 10 %)`.
    var reason: String {
        "holds \(Self.percent(share)) of this release's bytes (under \(Self.percent(Self.minimumShare)))"
    }

    static func percent(_ value: Double) -> String {
        let text = String(Int((value * 1000).rounded()))
        let padded = text.count < 2 ? "0" + text : text
        return "\(padded.dropLast()).\(padded.suffix(1)) %"
    }

    /// A path without the content hash bundlers put in file names: the folder, the name up
    /// to its first `-` or `.`, and the extension (`assets/index-B2x9Kq1z.js` →
    /// `assets/index*.js`).
    static func stem(_ path: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path }
        let head = name[..<dot].prefix { $0 != "-" && $0 != "." }
        return path[..<slash] + head + "*" + name[dot...]
    }
}
