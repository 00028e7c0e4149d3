import ClientUpdater
import Foundation

/// An organized version loaded for serving: URL path → file, built once at activation
/// so a request is a dictionary lookup. Immutable after loading; switching versions
/// swaps the whole value.
package final class ServedVersion: Sendable {
    /// The version id (the serving folder's name).
    package let id: String
    /// The serving folder.
    package let directory: String
    let files: [String: ServedFile]
    /// The page for `/` and client-side routes.
    let index: ServedFile?
    /// Every folder below the root that has an index.html: its URL path ending in `/`
    /// (`/about/`) → that file (docs/serving.md#folder-indexes).
    let folderIndexes: [String: ServedFile]
    let budget: MemoryBudget

    /// The file at `path`, matched byte for byte.
    func file(at path: String) -> ServedFile? {
        guard let file = files[path], file.answers(path) else { return nil }
        return file
    }

    /// The index.html of the folder `path` names with its trailing slash (`/about/`),
    /// matched byte for byte; nil for the root and for folders without one.
    func folderIndex(at path: String) -> ServedFile? {
        guard let file = folderIndexes[path], file.answers(path + "index.html") || file.answers(path) else { return nil }
        return file
    }

    init(id: String, directory: String, files: [String: ServedFile], index: ServedFile?, budget: MemoryBudget) {
        self.id = id
        self.directory = directory
        self.files = files
        self.index = index
        self.folderIndexes = Self.folderIndexes(of: files)
        self.budget = budget
    }

    /// `/about/` → the file of `/about/index.html` (or of `/about/`, a channel may list a
    /// page so), for every folder but the root, whose page is ``index``.
    static func folderIndexes(of files: [String: ServedFile]) -> [String: ServedFile] {
        var folders: [String: ServedFile] = [:]
        for (path, file) in files {
            let folder = path.hasSuffix("/") ? path : path.hasSuffix("/index.html") ? String(path.dropLast("index.html".count)) : nil
            guard let folder, folder != "/" else { continue }
            folders[folder] = file
        }
        return folders
    }

    /// Loads `serving/<id>/` using the organizer's `serving/<id>.json`; a folder without
    /// one is served as a plain tree (every regular file by its path, not cacheable).
    /// - Parameters:
    ///   - memoryCacheFileLimit: files up to this size are kept in memory once read.
    ///   - memoryCacheTotalLimit: total bytes the version keeps in memory.
    /// - Throws: ``ServingError`` `.noServingFolder`.
    package static func load(directory: String, memoryCacheFileLimit: Int, memoryCacheTotalLimit: Int) throws -> ServedVersion {
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw ServingError(.noServingFolder, "serving folder \(dir) does not exist")
        }
        let budget = MemoryBudget(fileLimit: memoryCacheFileLimit, totalLimit: memoryCacheTotalLimit)
        let id = (dir as NSString).lastPathComponent
        let manifestPath = dir + ".json"
        guard FileManager.default.fileExists(atPath: manifestPath) else {
            let files = try TreeScanner.scan(dir, skipTopLevel: [])
            return ServedVersion(id: id, directory: dir, files: files, index: files["/index.html"], budget: budget)
        }
        let manifest: ServingManifest
        do {
            manifest = try ServingManifest.read(from: manifestPath)
        } catch {
            throw ServingError(.noServingFolder, "cannot serve \(dir): \(error)")
        }
        var files: [String: ServedFile] = [:]
        files.reserveCapacity(manifest.entries.count)
        var index: ServedFile?
        for entry in manifest.entries {
            let file = ServedFile(
                path: dir + "/" + entry.file, size: entry.size, urlPath: entry.file, served: entry.urlPath,
                cacheable: entry.cacheable, hash: entry.contentHash, sourceMap: entry.sourceMapURLPath)
            files[entry.urlPath] = file
            if entry.file == manifest.index { index = file }
        }
        return ServedVersion(id: manifest.id, directory: dir, files: files, index: index, budget: budget)
    }
}

/// Builds a URL path → file map of a plain folder (served versions without metadata and
/// the Meteor `www` folder).
enum TreeScanner {
    static func scan(_ root: String, skipTopLevel: Set<String>) throws -> [String: ServedFile] {
        guard let walker = FileManager.default.enumerator(atPath: root) else {
            throw ServingError(.noServingFolder, "cannot list \(root)")
        }
        var files: [String: ServedFile] = [:]
        while let relative = walker.nextObject() as? String {
            if walker.level == 1, skipTopLevel.contains(relative) {
                walker.skipDescendants()
                continue
            }
            let path = root + "/" + relative
            var st = stat()
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            files["/" + relative] = ServedFile(
                path: path, size: Int64(st.st_size), urlPath: relative, served: "/" + relative,
                cacheable: false, hash: nil, sourceMap: nil)
        }
        return files
    }
}
