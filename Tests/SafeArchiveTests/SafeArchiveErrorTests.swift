import ClientFoundation
import SafeArchive
import Testing

/// SafeArchive's own error keeps the exit statuses its refusals had when they were
/// `SignedManifestError`s: 65 for a refused archive or folder, 66 for a missing input, 73
/// when nothing can be created, 70 for a bug.
@Suite struct SafeArchiveErrorTests {
    static let statuses: [(SafeArchiveError.Code, Int32)] = [
        (.archiveRejected, 65), (.archiveLimit, 65), (.archiveFailed, 65), (.sourceRejected, 65),
        (.notFound, 66), (.alreadyExists, 73), (.io, 73), (.internalError, 70),
    ]

    @Test(arguments: 0..<statuses.count)
    func eachCodeHasItsExitStatus(_ i: Int) {
        let (code, status) = Self.statuses[i]
        let error = SafeArchiveError(code, "archive rejected: test")
        #expect(error.kind.exitStatus == status, "\(code)")
        #expect(error.description == "archive rejected: test")
    }

    @Test func codesAreDistinctAndNamed() {
        let names = Self.statuses.map { "\($0.0)" }
        #expect(names == ["archiveRejected", "archiveLimit", "archiveFailed", "sourceRejected", "notFound", "alreadyExists", "io", "internalError"])
        #expect(Set(Self.statuses.map(\.0)).count == Self.statuses.count)
    }
}
