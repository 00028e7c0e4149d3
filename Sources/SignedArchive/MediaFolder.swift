import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// One app's channel on offline media (`clientctl-media/<app>/<channel>/`, written by
/// `clientctl export`; docs/offline-media.md), read without trusting the media: every
/// file is opened under the channel's folder one path part at a time without following a
/// symbolic link, must be a regular file with one link, and is copied into the device's
/// root (``MediaFolder/copy(_:to:expected:cap:)``) before anything reads it. Nothing is
/// ever written to the media.
final class MediaFolder: Sendable {
    /// What a media folder holds for this device.
    enum Opened {
        /// The channel's folder, open.
        case folder(MediaFolder)
        /// No media for this device's app and channel, and why (another app's, no
        /// `clientctl-media` at all): nothing to do.
        case absent(String)
    }

    /// The channel's folder, as the device names it in messages (`DIR/clientctl-media/APP/CHANNEL`).
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens `media` (the folder `install --from` names) and, in it, the folder of `app`'s
    /// `channel`.
    /// - Throws: ``SignedArchiveError`` `.notFound` when `media` is not a readable folder,
    ///   `.mediaRefused` when a part of the way is a symbolic link or not a folder.
    static func open(_ media: String, app: String, channel: String) throws -> Opened {
        let top = Glibc.open(media, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else {
            throw SignedArchiveError(.notFound, "--from \(media): \(String(cString: strerror(errno))): not a folder this device can read")
        }
        var current = top
        var shown = media
        for part in [MediaIndex.folder, app, channel] {
            let next = openat(current, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = Self.refined(errno, at: current, part)
            close(current)
            shown += "/" + part
            guard next >= 0 else {
                switch code {
                case ENOENT:
                    let what = part == MediaIndex.folder ? "no clientctl media" : "no media for \(app) channel '\(channel)'"
                    return .absent("\(media) holds \(what): nothing to install")
                case ELOOP: throw SignedArchiveError(.mediaRefused, "\(shown) is a symbolic link: media is read only through real folders")
                case ENOTDIR: throw SignedArchiveError(.mediaRefused, "\(shown) is not a folder")
                default: throw SignedArchiveError(.notFound, "\(shown): \(String(cString: strerror(code)))")
                }
            }
            current = next
        }
        return .folder(MediaFolder(path: shown, descriptor: current))
    }

    /// Copies the file at `relative` (``MediaIndex/pathProblem(_:)``'s rule) into `target`
    /// (a new file in the device's root), reading at most `cap` bytes, and returns the
    /// SHA-256 of what it wrote. With `expected` (the index's entry), a size or digest
    /// other than listed is refused. `target` is removed on any failure.
    /// - Throws: ``SignedArchiveError`` `.mediaRefused` for a path, a link, a special file,
    ///   a file over `cap`, one that changed while it was copied or does not match the index;
    ///   `.notFound` for a missing file; `UpdaterError` `.noSpace` when the copy cannot fit.
    func copy(_ relative: String, to target: String, expected: MediaIndex.File?, cap: Int64) throws -> String {
        let shown = path + "/" + relative
        func refuse(_ why: String) -> SignedArchiveError { SignedArchiveError(.mediaRefused, "\(shown): \(why)") }
        if let problem = MediaIndex.pathProblem(relative) { throw refuse("the path \(problem)") }
        let parts = relative.split(separator: "/").map(String.init)
        var directory = dup(descriptor)
        guard directory >= 0 else { throw SignedArchiveError.io("cannot open", path: path, errno: errno) }
        for part in parts.dropLast() {
            let next = openat(directory, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = Self.refined(errno, at: directory, part)
            close(directory)
            guard next >= 0 else { throw Self.openFailure(code, shown: shown, part: part) }
            directory = next
        }
        // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: no symbolic link.
        let fd = openat(directory, parts[parts.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        let code = errno
        close(directory)
        guard fd >= 0 else { throw Self.openFailure(code, shown: shown, part: parts[parts.count - 1]) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SignedArchiveError.io("cannot read", path: shown, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw refuse("not a regular file (a device, a pipe or a socket): media files are plain files")
        }
        guard info.st_nlink == 1 else { throw refuse("has \(info.st_nlink) hard links: media files have one") }
        let size = Int64(info.st_size)
        let limit = min(cap, expected?.size ?? cap)
        guard size <= limit else {
            throw refuse(
                expected.map { "is \(size) bytes, the media index lists \($0.size)" }
                    ?? "is \(size) bytes, over the \(cap) bytes such a file may have")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        try DiskSpace.require(size + DiskSpace.reserve, for: "copy of \(shown) of", size: size, at: (target as NSString).deletingLastPathComponent)
        let output = Glibc.open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw SignedArchiveError.io("cannot create", path: target, errno: errno) }
        var finished = false
        defer {
            close(output)
            if !finished { unlink(target) }
        }
        let hasher = Digest(.sha256)
        var copied: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw SignedArchiveError.io("cannot read", path: shown, errno: errno) }
            if n == 0 { break }
            copied += Int64(n)
            guard copied <= size else { throw refuse("grew while it was copied: the media changed under this device") }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            try AtomicFile.writeAll(fd: output, bytes: chunk, path: target)  // a full disk: ENOSPC, named
            hasher.update(chunk)
        }
        guard copied == size else { throw refuse("shrank while it was copied (\(copied) of \(size) bytes): the media changed under this device") }
        let digest = hasher.finalizeHex()
        if let expected, digest != expected.sha256 {
            throw refuse("its SHA-256 is \(digest.prefix(16))…, the media index lists \(expected.sha256.prefix(16))…: a damaged or swapped file")
        }
        finished = true
        return digest
    }

    /// `ELOOP` for a part that is a symbolic link: opened with `O_DIRECTORY`, Linux
    /// answers `ENOTDIR` for a link before it looks at `O_NOFOLLOW`.
    private static func refined(_ code: Int32, at directory: Int32, _ part: String) -> Int32 {
        guard code == ENOTDIR else { return code }
        var info = stat()
        return fstatat(directory, part, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK ? ELOOP : code
    }

    private static func openFailure(_ code: Int32, shown: String, part: String) -> SignedArchiveError {
        switch code {
        case ENOENT: return SignedArchiveError(.notFound, "\(shown): no such file on the media")
        case ELOOP: return SignedArchiveError(.mediaRefused, "\(shown): '\(part)' is a symbolic link: media is read only through real files")
        case ENOTDIR: return SignedArchiveError(.mediaRefused, "\(shown): '\(part)' is not a folder")
        default: return SignedArchiveError(.mediaRefused, "\(shown): \(String(cString: strerror(code)))")
        }
    }
}
