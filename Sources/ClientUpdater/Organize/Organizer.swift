import ClientFoundation
import ClientShim
import Foundation

/// Lays a version out under `<root>/serving/<id>/` by URL path (docs/serving.md#organizer).
///
/// Files are hard links to the channel's pristine, verified files; a file is copied only
/// where a link is impossible (another file system, link limit). Pages — the root's
/// index.html and every folder's (`about/index.html`, served for `/about/`) — are the only
/// files always copied, because the shim is injected into them; the original is never
/// modified. The folder is built in `serving/.staging-*` and renamed into place, and the
/// metadata the server needs is written beside it as `serving/<id>.json`. Organizing a
/// version that is already complete is a no-op, so a later switch is a pointer flip.
package struct Organizer: Sendable {
    package let layout: RootLayout
    /// The shim injected into every index.html.
    package var shim: Shim

    /// The largest index.html organized (64 MiB, a folder's as the root's): the page is
    /// read whole and copied with the shim, so a bigger one is refused before it is read.
    /// Meteor's runtime-config check reads pages under the same cap.
    package static let maxPageBytes = 64 << 20

    package init(layout: RootLayout, shim: Shim = Shim()) {
        self.layout = layout
        self.shim = shim
    }

    /// What one ``organize(id:assets:)`` did (the benchmark reports these numbers).
    package struct Report: Sendable, Equatable {
        /// `serving/<id>`.
        package var directory: String
        /// `serving/<id>.json`.
        package var manifestPath: String
        /// True when the version was already organized and nothing was written.
        package var alreadyOrganized: Bool
        package var linkedFiles: Int = 0
        package var linkedBytes: Int64 = 0
        /// Files copied: every index.html, plus any file that could not be linked.
        package var copiedFiles: Int = 0
        package var copiedBytes: Int64 = 0
        /// URL paths skipped: a duplicate of an earlier asset, or a missing source map.
        package var skipped: [String] = []
    }

    /// `serving/<id>` (nil when `id` is not a safe folder name).
    package func servingDirectory(for id: String) -> String? { layout.servingDirectory(id) }

    /// `serving/<id>.json` (nil when `id` is not a safe folder name).
    package func manifestPath(for id: String) -> String? { layout.servingDirectory(id).map { $0 + ".json" } }

    /// True when `serving/<id>/` and its metadata are complete.
    package func isOrganized(id: String) -> Bool {
        guard let dir = servingDirectory(for: id), let json = manifestPath(for: id) else { return false }
        return (try? ServingManifest.read(from: json)).map { $0.id == id } == true && Self.isDirectory(dir)
    }

    /// Organizes `assets` as version `id`. Idempotent: a complete serving folder whose
    /// metadata lists the same URL paths is left as it is.
    /// - Throws: ``UpdaterError`` `.invalidArgument` for an unsafe id or URL path,
    ///   `.notFound` for a missing source file, `.tooLarge` for an index.html (any folder's) over
    ///   ``maxPageBytes``, `.io` when the file system fails. On any
    ///   error nothing is left behind under `serving/`.
    @discardableResult
    package func organize(id: String, assets: [ServedAsset]) throws -> Report {
        guard let directory = servingDirectory(for: id), let manifestPath = manifestPath(for: id) else {
            throw UpdaterError(.invalidArgument, "cannot organize version \(id): not a safe folder name")
        }
        var report = Report(directory: directory, manifestPath: manifestPath, alreadyOrganized: false)
        let planned = try plan(id: id, assets: assets, report: &report)
        if let existing = try? ServingManifest.read(from: manifestPath), Self.isDirectory(directory),
            existing.id == id, Set(existing.entries.map(\.urlPath)) == Set(planned.map(\.asset.urlPath))
        {
            report.alreadyOrganized = true
            return report
        }
        try AtomicFile.makeDirectory(layout.serving)
        let staging = layout.serving + "/.staging-\(id)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var done = false
        defer { if !done { try? AtomicFile.removeTree(staging) } }
        try AtomicFile.makeDirectory(staging)
        var entries: [ServingManifest.Entry] = []
        entries.reserveCapacity(planned.count)
        var index: String?
        var folders: Set<Substring> = []
        for item in planned {
            let destination = staging + "/" + item.file
            if let slash = item.file.lastIndex(of: "/"), folders.insert(item.file[..<slash]).inserted {
                try AtomicFile.makeDirectory(staging + "/" + item.file[..<slash])
            }
            var entry = ServingManifest.Entry(
                urlPath: item.asset.urlPath, file: item.file, size: 0,
                cacheable: item.asset.cacheable, hash: item.asset.hash,
                sourceMapURLPath: item.asset.sourceMapURLPath, type: item.asset.type)
            if item.isPage {
                let page = try OrganizerFiles.readPage(item.asset.sourceFile)
                let shimmed = shim.inject(into: page, version: id)
                try OrganizerFiles.write(shimmed, to: destination)
                entry.size = Int64(shimmed.count)
                entry.hash = nil
                entry.cacheable = false
                entry.sha256 = Digest.hex(.sha256, of: shimmed)
                report.copiedFiles += 1
                report.copiedBytes += entry.size
                if item.isIndex { index = item.file }
            } else {
                let linked = try FilePlacement.linkOrCopy(item.asset.sourceFile, to: destination)
                let size = item.size
                entry.size = size
                if linked {
                    report.linkedFiles += 1
                    report.linkedBytes += size
                } else {
                    report.copiedFiles += 1
                    report.copiedBytes += size
                }
            }
            entries.append(entry)
        }
        // Replace a leftover of an interrupted organize, then move the new tree into place.
        if Self.exists(directory) {
            let trash = layout.serving + "/.trash-\(id)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            guard rename(directory, trash) == 0 else { throw UpdaterError.io("cannot move aside", path: directory, errno: errno) }
            try? AtomicFile.removeTree(trash)
        }
        guard rename(staging, directory) == 0 else { throw UpdaterError.io("cannot rename into place", path: directory, errno: errno) }
        done = true
        let manifest = ServingManifest(id: id, index: index, entries: entries)
        do {
            try AtomicFile.write(try manifest.encoded(), to: manifestPath)
        } catch {
            try? AtomicFile.removeTree(directory)
            throw error
        }
        return report
    }

    /// Removes `serving/<id>/` and its metadata (retention). Missing ones are ignored.
    package func remove(id: String) throws {
        guard let directory = servingDirectory(for: id), let manifestPath = manifestPath(for: id) else {
            throw UpdaterError(.invalidArgument, "cannot remove serving folder of \(id): not a safe folder name")
        }
        try AtomicFile.removeTree(manifestPath)
        try AtomicFile.removeTree(directory)
    }

    /// One asset's destination.
    struct PlannedFile {
        var asset: ServedAsset
        var file: String
        /// The root's index.html: the page for `/` and client-side routes.
        var isIndex: Bool
        /// An index.html, the root's or a folder's: a page the web view shows, so it gets the shim.
        var isPage: Bool
        var size: Int64
    }

    /// Validates URL paths and maps them to relative files; drops duplicates and missing
    /// source maps (recorded in `report.skipped`).
    func plan(id: String, assets: [ServedAsset], report: inout Report) throws -> [PlannedFile] {
        var seen: [String: Int] = [:]
        var result: [PlannedFile] = []
        for var asset in assets {
            guard let file = OrganizerFiles.relativeFile(forURLPath: asset.urlPath) else {
                throw UpdaterError(.invalidArgument, "cannot organize version \(id): unsafe URL path \(asset.urlPath)")
            }
            asset.urlPath = asset.urlPath == "/index.html" ? "/" : OrganizerFiles.decoded(asset.urlPath)
            if seen[file] != nil {
                report.skipped.append(asset.urlPath)
                continue
            }
            var st = stat()
            guard stat(asset.sourceFile, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                if asset.urlPath.hasSuffix(".map") {
                    report.skipped.append(asset.urlPath)
                    continue
                }
                throw UpdaterError(.notFound, "cannot organize version \(id): \(asset.sourceFile) for \(asset.urlPath) is missing or not a file")
            }
            seen[file] = result.count
            let isPage = file == "index.html" || file.hasSuffix("/index.html")
            result.append(PlannedFile(asset: asset, file: file, isIndex: file == "index.html", isPage: isPage, size: Int64(st.st_size)))
        }
        try OrganizerFiles.checkNoFileIsAFolder(result.map(\.file), version: id)
        return result
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
