/// Bookkeeping of the paths an extraction has created, to refuse duplicates and
/// file/directory conflicts before anything is written.
struct EntryTree {
    enum Kind { case file, directory, impliedDirectory }

    private(set) var kinds: [String: Kind] = [:]

    /// Records a file or directory at `components`, or returns why it is refused.
    /// Missing parent folders are recorded as implied directories.
    mutating func add(_ components: [String], isDirectory: Bool) -> String? {
        var path = ""
        for component in components.dropLast() {
            path = path.isEmpty ? component : path + "/" + component
            switch kinds[path] {
            case .file?: return "parent \"\(path)\" is a file"
            case .directory?, .impliedDirectory?: break
            case nil: kinds[path] = .impliedDirectory
            }
        }
        let full = components.joined(separator: "/")
        switch (kinds[full], isDirectory) {
        case (nil, _):
            kinds[full] = isDirectory ? .directory : .file
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
}
