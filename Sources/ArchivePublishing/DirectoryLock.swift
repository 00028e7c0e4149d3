import ClientFoundation
import Foundation
import SignedManifest

/// An exclusive lock on a folder (nothing is written into the release folder): one
/// attempt of ClientFoundation's one `flock`, busy at once when another publish holds it.
struct DirectoryLock {
    private let held: Flock

    init(_ path: String) throws {
        let held: Flock?
        do {
            held = try Flock.attempt(path, .folder)
        } catch .cannotOpen(let err), .cannotLock(let err) {
            throw ArchivePublishingError(.io, "cannot lock \(path): \(String(cString: strerror(err)))")
        } catch {
            throw ArchivePublishingError(.io, "cannot lock \(path): \(error)")
        }
        guard let held else { throw ArchivePublishingError(.busy, "\(path) is being published by another clientctl process; retry later") }
        self.held = held
    }

    /// Releases the lock now (it also goes with the last copy of the value).
    func release() { held.release() }
}
