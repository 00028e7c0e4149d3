/// Bookkeeping of the paths an extraction has created, to refuse duplicates, file/directory
/// conflicts and colliding names before anything is written.
///
/// Two names collide when a file system a web view may run on would store them as one:
/// names that are canonically equivalent Unicode (`é` precomposed and decomposed; Swift
/// compares `String`s that way, so they meet as the same key) and names that differ only
/// in case (`App.js`, `app.js`), which case-insensitive file systems (APFS and NTFS by
/// default) merge (docs/threat-model.md#the-entry-rule).
struct EntryTree {
    enum Kind { case file, directory, impliedDirectory }

    private(set) var kinds: [String: Kind] = [:]
    /// Each recorded path by its case-folded form, to find names that differ only in case.
    private var folded: [String: String] = [:]

    /// Records a file or directory at `components`, or returns why it is refused.
    /// Missing parent folders are recorded as implied directories.
    mutating func add(_ components: [String], isDirectory: Bool) -> String? {
        var path = ""
        for component in components.dropLast() {
            path = path.isEmpty ? component : path + "/" + component
            switch kinds[path] {
            case .file?: return "parent \"\(path)\" is a file"
            case .directory?, .impliedDirectory?: break
            case nil:
                if let other = collision(path) { return other }
                record(path, .impliedDirectory)
            }
        }
        let full = components.joined(separator: "/")
        switch (kinds[full], isDirectory) {
        case (nil, _):
            if let other = collision(full) { return other }
            record(full, isDirectory ? .directory : .file)
            return nil
        case (.file?, true): return "a file with this name exists"
        case (.file?, false): return "duplicate entry"
        case (.directory?, true): return "duplicate entry"
        case (.impliedDirectory?, true):
            kinds[full] = .directory
            return nil
        case (.directory?, false), (.impliedDirectory?, false): return "a directory with this name exists"
        }
    }

    /// The kind recorded at a root-level name, if any.
    func kind(of path: String) -> Kind? { kinds[path] }

    private func collision(_ path: String) -> String? {
        guard let other = folded[path.lowercased()], other != path else { return nil }
        return "collides with \"\(other)\" when case is ignored"
    }

    private mutating func record(_ path: String, _ kind: Kind) {
        kinds[path] = kind
        folded[path.lowercased()] = path
    }
}
