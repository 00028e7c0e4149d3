import ClientFoundation
import Foundation

/// Free space on a device root's file system, and the rule that refuses a download that
/// cannot fit before its first byte (docs/device-layout.md#a-full-disk).
///
/// A download needs the bytes still to fetch, then room to unpack: at least as many bytes
/// again as the archive (compression only makes an archive smaller than its tree), plus
/// ``reserve`` for the state and sidecar writes that follow. The unpacked size is not
/// signed, so this is a floor: unpacking can still run out of space, and is then undone.
package enum DiskSpace {
    /// Bytes kept free beyond a download and its unpacking, for `state.json`, sidecars
    /// and the serving folder's `index.html` copy.
    package static let reserve: Int64 = 1 << 20

    /// Bytes available to this (unprivileged) process on the file system holding `path`;
    /// `nil` when `statvfs` fails.
    package static func free(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(info.f_bavail).multipliedReportingOverflow(by: Int64(info.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// Bytes a download of `size` bytes needs before it starts, `downloaded` of them
    /// already on disk from an interrupted run.
    package static func needed(forArchiveOf size: Int64, downloaded: Int64 = 0) -> Int64 {
        max(0, size - downloaded) + size + reserve
    }

    /// Throws ``UpdaterError`` `.noSpace` when `needed` bytes do not fit on the file
    /// system of `path`, naming `what`, its size and the free space.
    /// - Parameters:
    ///   - free: the free bytes (measured by ``free(at:)`` when `nil`).
    package static func require(_ needed: Int64, for what: String, size: Int64, at path: String, free: Int64? = nil) throws {
        guard let available = free ?? Self.free(at: path), available < needed else { return }
        throw UpdaterError(
            .noSpace,
            "\(what) \(megabytes(size)) does not fit: \(megabytes(available)) free on \(path), \(megabytes(needed)) needed to download and unpack it; free some space, the next check tries again"
        )
    }

    /// `12.3 MB` (decimal megabytes, one decimal), as disk tools print sizes.
    package static func megabytes(_ bytes: Int64) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }

    /// True when `error` is the file system running out of space (`ENOSPC`, or a quota's
    /// `EDQUOT`), whatever layer wrapped it.
    package static func isNoSpace(_ error: any Error) -> Bool {
        if let updater = error as? UpdaterError {
            if updater.code == .noSpace { return true }
            if let box = updater.underlying as? POSIXErrorBox { return box.code == ENOSPC || box.code == EDQUOT }
            if let underlying = updater.underlying { return isNoSpace(underlying) }
            return false
        }
        if let wrapped = error as? any ClientctlError, let underlying = wrapped.underlying { return isNoSpace(underlying) }
        if let box = error as? POSIXErrorBox { return box.code == ENOSPC || box.code == EDQUOT }
        if let posix = error as? POSIXError { return posix.code == .ENOSPC || posix.code == .EDQUOT }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return ns.code == Int(ENOSPC) || ns.code == Int(EDQUOT) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError { return isNoSpace(underlying) }
        return false
    }
}
