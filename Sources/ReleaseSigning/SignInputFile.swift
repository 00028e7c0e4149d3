import ClientFoundation
import Foundation
@preconcurrency import Glibc
import SignedManifest

/// The message a sign command signs, in a private regular file: mode 0600 in a folder of
/// mode 0700 under the temporary directory, removed once the command is done. A regular
/// file (not a pipe) has a size, which one-shot signers such as `openssl pkeyutl -rawin`
/// need.
struct SignInputFile: Sendable {
    /// The private folder.
    let folder: String
    /// The file holding the message (`CLIENTCTL_SIGN_INPUT`).
    let path: String

    init(_ message: [UInt8]) throws {
        let base = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array((base + "clientctl-sign-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress else { return false }
            return mkdtemp(start) != nil
        }
        guard made else {
            throw ReleaseSigningError(.io, "cannot make a private folder in \(base) for the sign command's input: \(Self.lastError())")
        }
        folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        path = folder + "/message"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = Self.lastError()
            rmdir(folder)
            throw ReleaseSigningError(.io, "cannot create \(path) for the sign command's input: \(reason)")
        }
        defer { close(fd) }
        var written = 0
        while written < message.count {
            let n = message[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let reason = Self.lastError()
                remove()
                throw ReleaseSigningError(.io, "cannot write \(path) for the sign command's input: \(reason)")
            }
            written += n
        }
    }

    /// A new read-only descriptor of the file, for the command's standard input.
    func openForReading() throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReleaseSigningError(.io, "cannot open \(path) for the sign command's input: \(Self.lastError())") }
        return fd
    }

    /// Deletes the file and its folder.
    func remove() {
        unlink(path)
        rmdir(folder)
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// While a sign command runs in its own process group, the controlling terminal's
/// foreground goes to that group when clientctl held it, so the command can prompt for a
/// PIN or passphrase on `/dev/tty` (a background group reading the terminal is stopped),
/// and Ctrl-C reaches the command. Given back when the command is done.
struct TerminalHandover {
    private let terminal: Int32
    private let ours: pid_t

    /// Gives the terminal to `group` when this process's group holds it; else nil.
    static func give(to group: pid_t) -> TerminalHandover? {
        let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return nil }
        let ours = getpgrp()
        guard tcgetpgrp(terminal) == ours, tcsetpgrp(terminal, group) == 0 else {
            close(terminal)
            return nil
        }
        // A command that read the terminal before the handover was stopped (SIGTTIN).
        _ = kill(-group, SIGCONT)
        return TerminalHandover(terminal: terminal, ours: ours)
    }

    /// Takes the foreground back (from a background group, which needs SIGTTOU ignored).
    func takeBack() {
        let previous = signal(SIGTTOU, SIG_IGN)
        _ = tcsetpgrp(terminal, ours)
        signal(SIGTTOU, previous)
        close(terminal)
    }
}
