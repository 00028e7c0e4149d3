import SafeArchive
import SignedManifest

extension ReleaseFileList.File: ListedFile {}

extension ListedTree where File == ReleaseFileList.File {
    /// Checks `list` under `limits` (``ListedTree/check(files:limits:)`` on its files).
    package static func check(_ list: ReleaseFileList, limits: ExtractionLimits) throws -> ListedTree {
        try check(files: list.files, limits: limits)
    }
}
