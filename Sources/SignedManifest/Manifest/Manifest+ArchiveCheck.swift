import SafeArchive

extension ArchiveCheck {
    /// Checks the file at `path` against the manifest's `size` and `sha256` (size first,
    /// then the hash, read in chunks).
    public static func check(fileAt path: String, against manifest: Manifest) throws -> ArchiveCheck {
        try check(fileAt: path, size: manifest.size, sha256: manifest.sha256)
    }

    /// Checks what is readable from `fd` (from its current offset) against the manifest.
    public static func check(descriptor fd: Int32, path: String, against manifest: Manifest) throws -> ArchiveCheck {
        try check(descriptor: fd, path: path, size: manifest.size, sha256: manifest.sha256)
    }
}
